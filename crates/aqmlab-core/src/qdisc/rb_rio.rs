//! Rb-RIO, rate-based RED with three priority classes, kind `rb_rio` (study 3's
//! mechanism; **reconstruction** after Chung & Claypool's Section 2 and Figure 2, see `rb_red.rs`
//! for the rules and the reconstructed parts).
//!
//! Classes come from `Packet::class`: 3 and above → class 3 (highest), 2 → class 2,
//! 0 and 1 → class 1 (lowest, best effort). Each class has its own arrival-rate
//! estimate and RED count; the average queue and the target are shared. Under
//! overload class 1 loses first, then class 2, and class 3 only when it alone exceeds
//! the link rate.

use super::rb_red::{RbRed, COMMON_DOCS};
use super::red;
use super::Kind;
use crate::scenario::params::KindDoc;

pub const DOC: KindDoc = KindDoc {
    kind: "rb_rio",
    summary: "Rate-based RIO (reconstruction): three priority classes by packet class; class 1 dropped first, then 2, then 3",
    source: "study 3 Rb-RIO after De Cnodder et al., NOSSDAV 2000 — reconstruction after Chung & Claypool (Section 2, Figure 2)",
    params: &[
        COMMON_DOCS[0],
        COMMON_DOCS[1],
        COMMON_DOCS[2],
        COMMON_DOCS[3],
        COMMON_DOCS[4],
        COMMON_DOCS[5],
        red::MEAN_PKT_SIZE_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(RbRed::from_params(p, true)?.into()),
};

#[cfg(test)]
mod tests {
    use super::super::rb_red::tests::build;
    use super::super::testing::Harness;
    use super::super::{Discipline, DropReason};
    use crate::sim::time::NS_PER_MS;
    use serde_json::json;

    /// Worked trace, 10 Mbit/s link, K = 1 ms, 1250 B (10 000-bit) packets, all at the
    /// same instant t = 1 s (long after time 0, so each class's first update is
    /// `(1 − e^−1000)·b/1 s ≈ b` bit/s ≈ 0 and later ones add b/K = 1e7 each):
    /// - class 3: EAR3 ≈ 1e4 → TEAR ≤ SR, accepted;
    /// - class 2: EAR2 ≈ 1e4 → accepted;
    /// - class 3 again: EAR3 ≈ 1e7 + 1e4; TEAR ≈ 1.002e7 > SR, EAR3 + EAR2 > SR, and
    ///   EAR3 = 1.001e7 > 1e7 → case 4: class 3 with P = 1e4/1.001e7 ≈ 0.001;
    /// - class 1 now: case 4 → forced drop (classes 1 and 2 always dropped);
    /// - class 2 now: forced drop too.
    #[test]
    fn worked_trace_class_order() {
        let mut h = Harness::new();
        let mut q = build(json!({"window": "1ms", "wq": 1.0, "target": "1pkt"}), true).unwrap();
        let t = 1000 * NS_PER_MS;
        let mut send = |h: &mut Harness, class: u8| {
            let p = h.packet(1, 1250);
            h.packets[p].class = class;
            (p, q.enqueue(p, &mut h.ctx(t)))
        };
        assert!(send(&mut h, 3).1);
        assert!(send(&mut h, 2).1);
        send(&mut h, 3);
        let (p1, ok1) = send(&mut h, 1);
        let (p2, ok2) = send(&mut h, 2);
        assert!(!ok1 && !ok2);
        let forced: Vec<_> = h
            .dropped()
            .into_iter()
            .filter(|d| d.1 == DropReason::Forced)
            .map(|d| d.0)
            .collect();
        assert_eq!(forced, vec![p1, p2]);
    }
}
