//! Measurement point apart from the drop point: `monitor = "LINK"`.
//!
//! The satellite-gateway study (Byun's dissertation, 2007, §1.3.1) measures congestion at the
//! transmit queue in front of the space link but drops or marks at the receive queue in
//! front of the PEP: the PEP's per-connection buffers sit between the two, so the queue
//! that fills (transmit) is not the queue where packets can still be refused before the
//! PEP acknowledges them (receive). A discipline with `monitor = "LINK"` keeps its own
//! packets and takes its own decisions, but reads the congestion measure from the
//! egress queue of link `LINK`:
//!
//! | discipline | what it reads from the monitored link |
//! |---|---|
//! | `red`, `ared` | queue length (packets, or bytes in byte mode) for the average; its idle periods and rate for the idle decay |
//! | `sred` | queue length for `p_sred` |
//! | `avq` | the link rate `C` (virtual capacity bound and growth) |
//! | `avqred`, `pfavqred` | the bytes the link sends (measured output rate); its rate for the default capacities |
//!
//! The name is resolved to a link index when the topology is built (an unknown name,
//! the link itself, or a discipline that cannot monitor are errors with the field
//! path); the engine then passes a [`Monitored`] snapshot in every `QdiscCtx` of that
//! link. Other disciplines refuse the key: for them a monitored measure is not defined
//! by any source we follow.

use crate::scenario::error::{Result, ScenarioError};
use crate::sim::time::Nanos;
use serde_json::{Map, Value};

/// The disciplines that accept `monitor`.
pub const MONITOR_KINDS: &[&str] = &["red", "ared", "sred", "avq", "avqred", "pfavqred"];

/// What a discipline sees of the queue it monitors, at the instant of the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Monitored {
    pub len_packets: usize,
    pub len_bytes: u64,
    /// The monitored link's current rate.
    pub rate_bps: u64,
    /// Since when the monitored link has had nothing to send (None: busy).
    pub idle_since: Option<Nanos>,
    /// Bytes the monitored link has started sending since the run began (monotonic).
    pub sent_bytes: u64,
}

/// Read `monitor` from a discipline table of kind `kind` at `path`: the link name, or
/// None. A discipline outside `MONITOR_KINDS` refuses it.
pub fn read(map: &Map<String, Value>, path: &str, kind: &str) -> Result<Option<String>> {
    let Some(v) = map.get("monitor") else {
        return Ok(None);
    };
    let at = format!("{path}.monitor");
    if !MONITOR_KINDS.contains(&kind) {
        return Err(ScenarioError::new(
            at,
            format!(
                "queue discipline `{kind}` cannot monitor another queue; `monitor` is for {}",
                MONITOR_KINDS.join(", ")
            ),
        ));
    }
    match v {
        Value::String(s) if !s.is_empty() => Ok(Some(s.clone())),
        v => Err(ScenarioError::new(
            at,
            format!(
                "{}: expected the name of the link whose queue to monitor",
                crate::scenario::params::show_value(v)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::super::{build, Discipline, DropReason, LinkInfo};
    use super::*;
    use serde_json::json;

    const MS: Nanos = 1_000_000;

    fn busy(len: usize) -> Option<Monitored> {
        Some(Monitored {
            len_packets: len,
            len_bytes: len as u64 * 500,
            rate_bps: 10_000_000,
            idle_since: None,
            sent_bytes: 0,
        })
    }

    /// RED (wq 0.5, min 2, max 4, max_p 0 so only the forced region drops) at queue A,
    /// with A itself empty. Monitoring B (6 packets queued, then 0, then idle):
    ///   t=1ms: avg = 0.5·0 + 0.5·6 = 3      → accept (pb = 0 below max)
    ///   t=2ms: avg = 0.5·3 + 0.5·6 = 4.5    → ≥ max: forced drop
    ///   t=3ms: B busy, empty: avg = 2.25    → accept
    ///   B idle since 3 ms; s = 500 B at 10 Mbit/s = 0.4 ms:
    ///   t=5ms: m = 2/0.4 = 5:   avg = 2.25·0.5^5 = 0.0703125
    ///   t=6ms: m = (6−5)/0.4 = 2.5 (only the idle time since the last update)
    /// Without the monitor the same arrivals see A's own queue (0, 1, 1 …): the first
    /// decays from idle to 0, the second gives 0.5 — nothing is dropped.
    #[test]
    fn red_drops_by_the_monitored_queue_average_not_its_own() {
        let spec = json!({"kind": "red", "min": "2pkt", "max": "4pkt", "probability": 0.0,
                          "wq": 0.5, "mean_pkt_size": "500B"});
        let info = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 1_000_000_000,
            mtu: 1500,
            delay: 0,
        };
        let run = |monitored: bool| {
            let mut q = build(&spec, "q", &info).unwrap();
            let mut h = Harness::new();
            let mut avgs = Vec::new();
            let states = [
                (MS, busy(6)),
                (2 * MS, busy(6)),
                (3 * MS, busy(0)),
                (
                    5 * MS,
                    Some(Monitored {
                        idle_since: Some(3 * MS),
                        ..busy(0).unwrap()
                    }),
                ),
                (
                    6 * MS,
                    Some(Monitored {
                        idle_since: Some(3 * MS),
                        ..busy(0).unwrap()
                    }),
                ),
            ];
            for (t, m) in states {
                h.monitor = if monitored { m } else { None };
                let p = h.packet(1, 500);
                q.enqueue(p, &mut h.ctx(t));
                let super::super::AnyQdisc::Red(r) = &q.inner else {
                    unreachable!()
                };
                avgs.push(r.avg());
            }
            (avgs, h.dropped())
        };
        let (avgs, drops) = run(true);
        assert_eq!(&avgs[..3], &[3.0, 4.5, 2.25]);
        assert_eq!(avgs[3], 2.25 * 0.5f64.powi(5));
        assert!((avgs[4] - 2.25 * 0.5f64.powi(5) * 0.5f64.powf(2.5)).abs() < 1e-15);
        assert_eq!(drops.len(), 1);
        assert_eq!(drops[0].1, DropReason::Forced);
        let (avgs, drops) = run(false);
        assert_eq!(&avgs[..2], &[0.0, 0.5]);
        assert!(drops.is_empty());
    }

    /// SRED's p_sred uses the monitored queue against `limit`'s B/6 and B/3 (B = 60):
    /// 30 ≥ 20 → p_max = 0.15; 12 in [10, 20) → p_max/4; the first arrivals fill the
    /// zombie list (no hit, P = 0, so p_zap = p_sred).
    #[test]
    fn sred_reads_the_monitored_queue() {
        let spec = json!({"kind": "sred", "limit": "60pkt", "zombies": 10});
        let info = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 10_000_000,
            mtu: 1500,
            delay: 0,
        };
        for (len, want) in [(30, 0.15), (12, 0.0375), (0, 0.0)] {
            let mut q = build(&spec, "q", &info).unwrap();
            let mut h = Harness::new();
            h.monitor = busy(len);
            let p = h.packet(1, 500);
            let _ = q.enqueue(p, &mut h.ctx(MS));
            assert_eq!(q.drop_prob(), Some(want), "monitored queue of {len}");
        }
    }

    #[test]
    fn only_the_listed_kinds_take_monitor_and_it_must_be_a_name() {
        let info = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 10_000_000,
            mtu: 1500,
            delay: 0,
        };
        for k in MONITOR_KINDS {
            let q = build(&json!({"kind": k, "monitor": "tx"}), "q", &info).unwrap();
            assert_eq!(q.monitor.as_deref(), Some("tx"));
        }
        let e = build(&json!({"kind": "codel", "monitor": "tx"}), "l.qdisc", &info)
            .err()
            .unwrap();
        assert_eq!(e.path, "l.qdisc.monitor");
        assert!(e.message.contains("`codel` cannot monitor"), "{e}");
        let e = build(&json!({"kind": "red", "monitor": 5}), "l.qdisc", &info)
            .err()
            .unwrap();
        assert_eq!(e.path, "l.qdisc.monitor");
        assert!(e.message.contains("expected the name of the link"), "{e}");
    }
}
