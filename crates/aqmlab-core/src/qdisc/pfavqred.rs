//! PFAVQRED, per-flow weighted AVQRED (Byun's dissertation, 2007, Chapter 5), kind
//! `pfavqred`. **Reconstruction**: the per-flow weight equations are not in the text we
//! have; this is our reconstruction from what survives (parameter names are ours).
//!
//! AVQRED (`avqred.rs`) with `p = min(1, p_a · pfweight)` in its probabilistic region,
//! where for the arriving packet's flow (`Packet::flow`):
//! - `rate_f` is the flow's arrival rate, a time-sliding-window estimate with window
//!   `window` (as Rb-RED's `TswRate`, `rb_red.rs`);
//! - `fair_share = v_cap / N_active`;
//! - `pfweight = (rate_f / fair_share)²`, squared to penalise heavy flows harder, and 0
//!   for a flow younger than `young` (100 ms) since its first packet here.
//!
//! `N_active` counts flows with an arrival within the last `active_window`: a flow is
//! added when it arrives after being inactive, and the count is recomputed exactly at
//! each AVQRED measurement (`interval`). Forced decisions (virtual queue at or above
//! `max`) are not weighted.
//!
//! Per-flow state is a vector indexed by flow id, grown when a new flow id appears (no
//! allocation per packet once every flow has been seen); the recount is O(flows) once
//! per `interval`.

use super::avqred::{Avqred, COMMON_DOCS};
use super::avqred_flows::PerFlow;
use super::rb_red::WINDOW_DOC;
use super::Kind;
use crate::scenario::params::{KindDoc, ParamDoc};

pub const DOC: KindDoc = KindDoc {
    kind: "pfavqred",
    summary: "AVQRED with p_a weighted per flow by (rate/fair share)² (reconstruction)",
    source: "Byun, Congestion Control in Satellite Networks, PhD dissertation, 2007, Ch. 5 (reconstruction)",
    params: &[
        COMMON_DOCS[0],
        COMMON_DOCS[1],
        COMMON_DOCS[2],
        COMMON_DOCS[3],
        COMMON_DOCS[4],
        COMMON_DOCS[5],
        COMMON_DOCS[6],
        COMMON_DOCS[7],
        COMMON_DOCS[8],
        WINDOW_DOC,
        ParamDoc {
            name: "young",
            ty: "duration",
            default: "100ms",
            doc: "flows younger than this (since their first packet) get weight 0",
        },
        ParamDoc {
            name: "active_window",
            ty: "duration",
            default: "1s",
            doc: "a flow is active if it sent a packet within this time",
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| {
        let mut q = Avqred::from_params(p, link, None)?;
        q.per_flow = Some(PerFlow::from_params(p)?);
        Ok(q.into())
    },
};

#[cfg(test)]
mod tests {
    use super::super::avqred::tests::build;
    use super::super::testing::Harness;
    use super::super::Discipline;
    use super::*;
    use crate::scenario::params::Params;
    use crate::sim::time::{Nanos, NS_PER_MS};
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn per_flow(v: serde_json::Value) -> PerFlow {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        PerFlow::from_params(&mut p).unwrap()
    }

    /// Worked trace of the weights: v_cap 8 Mbit/s, window 100 ms, young 100 ms.
    /// - flow 0 at t=0 (1000 B): young → 0; N = 1.
    /// - flow 1 at t=0: young → 0; N = 2.
    /// - flow 0 at t=200 ms: Δ = 2K: rate = (1 − e^−2)·8000/0.2 + e^−2·r0 where
    ///   r0 = 8000/0.1 = 80 000 (first arrival Δ = 0 → b/K): 0.8646647·40 000 +
    ///   0.1353353·80 000 = 34 586.59 + 10 826.82 = 45 413.41 bit/s; fair = 8e6/2 = 4e6;
    ///   weight = (45 413.41/4e6)² = 0.011353353² = 1.288986e-4.
    #[test]
    fn worked_trace_weights() {
        let mut pf = per_flow(json!({}));
        assert_eq!(pf.weight(0, 1000, 0, 8e6), 0.0);
        assert_eq!(pf.weight(1, 1000, 0, 8e6), 0.0);
        assert_eq!(pf.active(), 2);
        let w = pf.weight(0, 1000, 200 * MS, 8e6);
        assert!((w - 1.288_986e-4).abs() < 1e-9, "{w}");
        // 1.5 s later only flow 0 is active again: the recount drops flow 1.
        pf.weight(0, 1000, 1700 * MS, 8e6);
        pf.recount(1700 * MS);
        assert_eq!(pf.active(), 1);
        // Flow 1 comes back after 2 s of silence: counted again at once.
        pf.weight(1, 1000, 2000 * MS, 8e6);
        assert_eq!(pf.active(), 2);
    }

    #[test]
    fn a_young_flow_is_never_dropped_early_but_a_heavy_one_is() {
        let mut h = Harness::new();
        // Virtual queue held in the probabilistic region: min 0, max 1000 packets.
        let mut q = build(
            json!({"min": 0.0, "max": 1000.0, "mean_pkt_size": "1000B"}),
            None,
        )
        .unwrap();
        q.per_flow = Some(per_flow(json!({})));
        // A new flow within its first 100 ms: weight 0 → p = 0 whatever the queue.
        for i in 0..50 {
            let p = h.packet(3, 1000);
            assert!(q.enqueue(p, &mut h.ctx(i * MS)));
        }
        assert!(h.dropped().is_empty());
        // Afterwards its rate (1000 B per ms = 8 Mbit/s) equals v_cap with N = 1:
        // weight ≈ 1, so drops appear as the virtual queue grows.
        for i in 100..400 {
            let p = h.packet(3, 1000);
            q.enqueue(p, &mut h.ctx(i * MS / 2));
        }
        assert!(!h.dropped().is_empty());
    }
}
