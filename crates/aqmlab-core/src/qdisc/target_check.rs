//! A warning, not an error: a CoDel-family target shorter than one MTU's transmission
//! time at the link's rate.
//!
//! CoDel drops when the sojourn stays above `target` for an `interval`; on a slow link a
//! single full-size packet waits longer than a 5 ms target (1500 B at 1 Mbit/s = 12 ms),
//! so CoDel keeps dropping with only one packet queued — a sparse ping behind one upload
//! loses packets it should not. RFC 8289 §4.4 ("Setpoint") notes the target must exceed
//! a packet time on slow links; sqm-scripts raises it to the MTU time plus a margin and
//! CAKE (sch_cake.c `cake_set_rate`) to 1.5 MTU times. aqmlab keeps what the scenario
//! says and warns, naming the value to set.

use super::{LinkInfo, KINDS};
use crate::scenario::units::parse_duration;
use crate::sim::time::Nanos;
use serde_json::Value;

/// Kinds whose `target` is CoDel's (sojourn above target for an interval → drop).
const CODEL_FAMILY: [&str; 4] = ["codel", "fq_codel", "sfq_codel", "cobalt"];

/// The warning for the discipline `spec` at `path` on `link`, if its target is below
/// one MTU's transmission time.
pub fn warning(spec: &Value, path: &str, link: &LinkInfo) -> Option<String> {
    let kind = spec.get("kind")?.as_str()?;
    if !CODEL_FAMILY.contains(&kind) || link.rate_bps == 0 {
        return None;
    }
    let target: Nanos = match spec.get("target").and_then(Value::as_str) {
        Some(t) => parse_duration(t).ok()?,
        None => {
            let doc = KINDS.iter().find(|k| k.doc.kind == kind)?.doc;
            let default = doc.params.iter().find(|p| p.name == "target")?.default;
            parse_duration(default).ok()?
        }
    };
    let mtu_time = (link.mtu as u128 * 8 * 1_000_000_000 / link.rate_bps as u128) as Nanos;
    (target < mtu_time).then(|| {
        let ms = |ns: Nanos| ns as f64 / 1e6;
        format!(
            "{path}: {kind} target {} ms is shorter than one {} B packet's transmission time at {} bit/s ({} ms), so \
             CoDel drops with a single packet queued; set target to at least {} ms (CAKE uses 1.5 MTU times, RFC 8289 §4.4)",
            ms(target),
            link.mtu,
            link.rate_bps,
            (ms(mtu_time) * 100.0).round() / 100.0,
            (ms(mtu_time * 3 / 2) * 10.0).ceil() / 10.0,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn link(rate_bps: u64) -> LinkInfo {
        LinkInfo {
            rate_bps,
            mtu: 1500,
            delay: 0,
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
        }
    }

    #[test]
    fn a_5ms_target_on_a_1mbit_uplink_warns() {
        // 1500 B × 8 / 1 Mbit/s = 12 ms > 5 ms (fq_codel's default target)
        let w = warning(
            &json!({"kind": "fq_codel"}),
            "topology.links[1].qdisc",
            &link(1_000_000),
        )
        .unwrap();
        assert!(w.contains("12 ms") && w.contains("at least 18 ms"), "{w}");
        // 10 Mbit/s: 1.2 ms < 5 ms, no warning; an explicit 15 ms target at 1 Mbit/s: none
        assert!(warning(&json!({"kind": "fq_codel"}), "q", &link(10_000_000)).is_none());
        assert!(warning(
            &json!({"kind": "codel", "target": "15ms"}),
            "q",
            &link(1_000_000)
        )
        .is_none());
        assert!(warning(&json!({"kind": "pie"}), "q", &link(1_000_000)).is_none());
    }
}
