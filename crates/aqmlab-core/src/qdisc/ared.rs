//! Adaptive RED (S. Floyd, R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for
//! Increasing the Robustness of RED's Active Queue Management", 2001), kind `ared`.
//!
//! It is RED (`red.rs`) in gentle mode with its parameters set from a target delay and
//! a rate, and `max_p` adapted slowly to keep the average queue in a target band:
//! - `C = rate / (8·mean_pkt_size)` packets/s; `min_th = max(5, target·C/2)`,
//!   `max_th = 3·min_th` (packets; bytes in byte mode: × `mean_pkt_size`),
//!   `w_q = 1 − exp(−1/C)` (a time constant of about one second);
//! - every `interval` (0.5 s): if `avg > min_th + 0.6·Δ` and `max_p ≤ 0.5`,
//!   `max_p += min(0.01, max_p/4)`; if `avg < min_th + 0.4·Δ` and `max_p ≥ 0.01`,
//!   `max_p *= 0.9` (Δ = max_th − min_th); `max_p` is kept in [0.01, 0.5].
//!
//! Choices where the sources differ:
//! - **Timer, not arrivals.** The adaptation runs on a timer every `interval`
//!   (`next_timer`/`on_timer`), as the paper ("every interval seconds") and Linux
//!   (`red_adaptative_timer`, HZ/2) do. ns-3 checks on arrivals whenever
//!   `now > lastSet + interval` and moves `lastSet` only when `max_p` changes, so it
//!   adapts at arrival instants and not at all on an idle link.
//! - On the timer the average is the idle-decayed one if the link is idle, without
//!   storing it (Linux `red_adaptative_algo`).
//! - `rate` is a parameter of its own (default: the link rate when the qdisc is built),
//!   because the thresholds are fixed at configuration time while the real link rate
//!   may change; the idle-time decay uses the link's current rate (`red.rs`).
//! - Initial `max_p` (`probability`) defaults to 0.02 (ns-3 `1/LInterm`); the paper's
//!   `max_p` bounds are applied with a clamp after each step, because its guards
//!   (`max_p ≤ 0.5` before adding) would otherwise allow 0.51 or 0.009.
//! - Linux does not derive the thresholds; ns-3 does (`ARED = true`) as here.

use super::red::{self, Adapt, Red, MAX_P_BOTTOM, MAX_P_TOP};
use super::red_ns2;
use super::{Kind, LinkInfo};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS};

pub const DOC: KindDoc = KindDoc {
    kind: "ared",
    summary:
        "Adaptive RED: gentle RED with thresholds from a target delay and max_p adapted by AIMD",
    source: "Floyd, Gummadi & Shenker 2001; Linux red.h (adaptive); ns-3 red-queue-disc.cc (ARED)",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "hard buffer limit (packets or bytes); beyond it tail drop",
        },
        ParamDoc {
            name: "target",
            ty: "duration",
            default: "5ms",
            doc: "target queueing delay: min_th = max(5, target·C/2) packets",
        },
        ParamDoc {
            name: "rate",
            ty: "rate",
            default: "link rate",
            doc: "capacity C used for the thresholds and w_q (C in packets/s of mean_pkt_size)",
        },
        ParamDoc {
            name: "interval",
            ty: "duration",
            default: "500ms",
            doc: "how often max_p is adapted",
        },
        ParamDoc {
            name: "probability",
            ty: "float",
            default: "0.02",
            doc: "initial max_p, in [0.01, 0.5]",
        },
        red::ACTION_DOC,
        red::ECN_DOC,
        red::HARDDROP_DOC,
        red::BYTEMODE_DOC,
        ParamDoc {
            name: "mean_pkt_size",
            ty: "size",
            default: "500B",
            doc: "packet size for C, idle-time decay and byte-mode scaling",
        },
        red::DEFAULTS_DOC,
        ParamDoc {
            name: "min",
            ty: "limit",
            default: "auto",
            doc: "defaults = ns2 only: ns-2 thresh_ (default automatic, max(5, target·C/2) packets)",
        },
        ParamDoc {
            name: "max",
            ty: "limit",
            default: "3·min",
            doc: "defaults = ns2 only: ns-2 maxthresh_",
        },
        ParamDoc {
            name: "wq",
            ty: "float",
            default: "auto",
            doc: "defaults = ns2 only: ns-2 q_weight_ (default 1 − exp(−1/(10·max(0.1 s, 3·(delay + 1/C))·C)))",
        },
        ParamDoc {
            name: "gentle",
            ty: "bool",
            default: "true",
            doc: "defaults = ns2 only: ns-2 gentle_",
        },
        red::NS2_ONLY_DOCS[0],
        red::NS2_ONLY_DOCS[1],
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(from_params(p, link)?.into()),
};

/// ARED's automatic thresholds and weight for a capacity of `rate_bps` and `target`:
/// `(min_th, max_th, w_q)` with the thresholds in packets.
pub fn auto_params(rate_bps: u64, mean_pkt_size: u32, target: Nanos) -> (f64, f64, f64) {
    let c = rate_bps as f64 / (8.0 * mean_pkt_size as f64);
    let target_s = target as f64 / 1e9;
    let min_th = (target_s * c / 2.0).max(5.0);
    (min_th, 3.0 * min_th, 1.0 - libm::exp(-1.0 / c))
}

/// Build an Adaptive RED queue.
pub fn from_params(p: &mut Params, link: &LinkInfo) -> Result<Red> {
    if red::defaults_from(p)? == red::Defaults::Ns2 {
        return red_ns2::build(p, link, true);
    }
    red::reject_ns2_only(p, &["min", "max", "wq", "gentle", "queue_in_bytes", "wait"])?;
    let mut r = Red::common_from(p)?;
    let target = p.positive_duration_or("target", 5 * NS_PER_MS)?;
    let rate = p.rate("rate")?.unwrap_or(link.rate_bps);
    if rate == 0 {
        return Err(p.error("rate", "0: expected a rate greater than zero"));
    }
    let interval = p.timer_period_or("interval", 500 * NS_PER_MS)?;
    r.curve.max_p = p.f64_or("probability", 0.02, MAX_P_BOTTOM, MAX_P_TOP)?;
    let (min_th, max_th, wq) = auto_params(rate, r.mean_pkt_size, target);
    let unit = if r.bytemode {
        r.mean_pkt_size as f64
    } else {
        1.0
    };
    r.curve.min_th = min_th * unit;
    r.curve.max_th = max_th * unit;
    r.average.wq = wq;
    r.curve.gentle = true;
    r.adapt = Some(Adapt {
        interval,
        next: interval,
    });
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::super::red::tests::arrive;
    use super::super::testing::Harness;
    use super::super::Discipline;
    use super::*;
    use crate::net::packet::Ecn;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn build(v: serde_json::Value, rate_bps: u64) -> Result<Red> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let r = from_params(
            &mut p,
            &LinkInfo {
                base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
                rate_bps,
                mtu: 1500,
                delay: 0,
            },
        )?;
        p.finish("ared")?;
        Ok(r)
    }

    #[test]
    fn thresholds_from_target_and_rate() {
        // 2 Mbit/s, 1000 B: C = 2e6/8000 = 250 pkt/s; target·C/2 = 0.010·250/2 = 1.25 < 5
        // -> min_th = 5, max_th = 15; w_q = 1 − e^(−1/250) = 1 − e^(−0.004)
        // = 0.004 − 0.004²/2 + 0.004³/6 = 0.004 − 0.000008 + 0.0000000107 = 0.0039920107.
        let r = build(
            json!({"target": "10ms", "rate": "2Mbit", "mean_pkt_size": "1000B"}),
            1,
        )
        .unwrap();
        assert_eq!((r.curve.min_th, r.curve.max_th), (5.0, 15.0));
        assert!(
            (r.average.wq - 0.003_992_010_656).abs() < 1e-12,
            "{}",
            r.average.wq
        );
        assert!(r.curve.gentle);
        // 100 Mbit/s: C = 12500 pkt/s; 0.010·12500/2 = 62.5 -> (62.5, 187.5);
        // w_q = 1 − e^(−0.00008) = 0.00008 − 3.2e-9 = 7.99968e-5.
        let r = build(
            json!({"target": "10ms", "mean_pkt_size": "1000B"}),
            100_000_000,
        )
        .unwrap();
        assert_eq!((r.curve.min_th, r.curve.max_th), (62.5, 187.5));
        assert!(
            (r.average.wq - 7.999_68e-5).abs() < 1e-12,
            "{}",
            r.average.wq
        );
        // Byte mode: the same thresholds in bytes.
        let r = build(
            json!({"target": "10ms", "mean_pkt_size": "1000B", "bytemode": true}),
            100_000_000,
        )
        .unwrap();
        assert_eq!((r.curve.min_th, r.curve.max_th), (62_500.0, 187_500.0));
    }

    /// Hold the average at `avg` and run the adaptation timer once at `now`.
    fn tick(r: &mut Red, h: &mut Harness, now: Nanos) {
        assert_eq!(r.next_timer(), Some(now));
        r.on_timer(&mut h.ctx(now));
    }

    #[test]
    fn max_p_moves_by_aimd_above_and_below_the_band() {
        let mut h = Harness::new();
        // 2 Mbit/s, 1000 B, 10 ms: min 5, max 15, band [5 + 0.4·10, 5 + 0.6·10] = [9, 11].
        let mut r = build(
            json!({"target": "10ms", "rate": "2Mbit", "mean_pkt_size": "1000B"}),
            1,
        )
        .unwrap();
        // Make the queue busy (not idle) with the average held at 12 > 11.
        arrive(&mut r, &mut h, 0, 1000, Ecn::NotEct);
        r.set_avg_for_test(12.0);
        // max_p 0.02: +min(0.01, 0.02/4 = 0.005) = 0.025; +0.00625 = 0.03125;
        // +0.0078125 = 0.0390625; +0.009765625 = 0.048828125; +0.01 = 0.058828125.
        let expect_up = [0.025, 0.03125, 0.0390625, 0.048828125, 0.058828125];
        for (i, e) in expect_up.iter().enumerate() {
            tick(&mut r, &mut h, (i as Nanos + 1) * 500 * MS);
            assert!(
                (r.curve.max_p - e).abs() < 1e-15,
                "step {i}: {}",
                r.curve.max_p
            );
        }
        // Inside the band (avg 10): no change.
        r.set_avg_for_test(10.0);
        tick(&mut r, &mut h, 3000 * MS);
        assert!((r.curve.max_p - 0.058828125).abs() < 1e-15);
        // Below (avg 8 < 9): ×0.9 -> 0.0529453125, 0.04765078125.
        r.set_avg_for_test(8.0);
        tick(&mut r, &mut h, 3500 * MS);
        assert!((r.curve.max_p - 0.052_945_312_5).abs() < 1e-15);
        tick(&mut r, &mut h, 4000 * MS);
        assert!((r.curve.max_p - 0.047_650_781_25).abs() < 1e-15);
        assert_eq!(r.next_timer(), Some(4500 * MS));
    }

    #[test]
    fn max_p_stays_within_bounds() {
        let mut h = Harness::new();
        let mut r = build(
            json!({"rate": "2Mbit", "mean_pkt_size": "1000B", "probability": 0.5}),
            1,
        )
        .unwrap();
        arrive(&mut r, &mut h, 0, 1000, Ecn::NotEct);
        r.set_avg_for_test(14.0);
        // 0.5 ≤ 0.5 so the paper adds min(0.01, 0.125) = 0.01 -> 0.51; clamped to 0.5.
        tick(&mut r, &mut h, 500 * MS);
        assert_eq!(r.curve.max_p, 0.5);
        // Down to the floor: 0.0105·0.9 = 0.00945 -> 0.01; at 0.01 (≥ 0.01) 0.009 -> 0.01.
        r.curve.max_p = 0.0105;
        r.set_avg_for_test(6.0);
        tick(&mut r, &mut h, 1000 * MS);
        assert_eq!(r.curve.max_p, 0.01);
        tick(&mut r, &mut h, 1500 * MS);
        assert_eq!(r.curve.max_p, 0.01);
    }

    #[test]
    fn adaptation_sees_the_idle_decayed_average() {
        let mut h = Harness::new(); // link at 10 Mbit/s
        let mut r = build(
            json!({"rate": "2Mbit", "mean_pkt_size": "1000B", "probability": 0.1}),
            1,
        )
        .unwrap();
        arrive(&mut r, &mut h, 0, 1000, Ecn::NotEct);
        r.set_avg_for_test(12.0);
        r.average.wq = 0.002;
        r.dequeue(&mut h.ctx(100 * MS));
        assert_eq!(r.dequeue(&mut h.ctx(100 * MS)), None); // idle from 100 ms
                                                           // At 500 ms: idle 400 ms, s = 1000·8/10e6 = 0.8 ms -> m = 500;
                                                           // avg = 12·0.998^500 = 12·e^(500·ln 0.998) = 12·e^(−1.001001) = 12·0.36751 = 4.41
                                                           // < 9 -> max_p·0.9 = 0.09, although the stored average is still 12.
        tick(&mut r, &mut h, 500 * MS);
        assert!((r.curve.max_p - 0.09).abs() < 1e-15);
        assert_eq!(r.avg(), 12.0);
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"target": "0ms"}), "q.target"),
            (json!({"rate": "0bit"}), "q.rate"),
            (json!({"interval": "0s"}), "q.interval"),
            (json!({"probability": 0.9}), "q.probability"),
            (json!({"min": "5pkt"}), "q.min"),
        ] {
            let e = build(bad, 10_000_000).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }
}
