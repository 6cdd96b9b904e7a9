//! The LLD model's own result tables (docs/output.md): `lld`, per LLD link and service
//! flow, the grants it received (from requests and proactive), their use and the bytes
//! it sent; `lld_flows`, per LLD link and flow with packets classified to the LL SF,
//! Queue Protection's sanctions.

use super::{FlowQp, Lld, SfGrants};
use crate::measure::link_stats::LinkStats;
use crate::net::access::AnyAccess;
use crate::output::table::{col, Table};

/// (link, service flow, its grants, its queue's counters, bytes requested, MAPs).
type Row<'a> = (
    &'a str,
    &'static str,
    &'a SfGrants,
    &'a LinkStats,
    u64,
    u64,
    u64,
);

/// (link, flow id, its counters).
type FlowRow<'a> = (&'a str, usize, &'a FlowQp);

/// The `lld` and `lld_flows` tables, present when a link is an LLD modem.
pub(super) fn tables(links: &[(&str, &AnyAccess)], per_s: &dyn Fn(f64) -> f64) -> Vec<Table> {
    let mut rows: Vec<Row> = Vec::new();
    let mut flows: Vec<FlowRow> = Vec::new();
    for &(name, m) in links {
        let Ok(d) = <&Lld>::try_from(m) else {
            continue;
        };
        let s = &d.stats;
        flows.extend(
            s.flows
                .iter()
                .enumerate()
                .filter(|(_, f)| f.ll_packets > 0)
                .map(|(i, f)| (name, i, f)),
        );
        rows.push((
            name,
            "classic",
            &s.classic,
            &d.classic.stats,
            d.cmac.stats.bytes_requested,
            s.maps,
            s.token_limited,
        ));
        rows.push((
            name,
            "ll",
            &s.ll,
            &d.ll.stats,
            d.lmac.stats.bytes_requested,
            s.maps,
            s.token_limited,
        ));
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let table = Table::from_rows(
        "lld",
        &[
            col("link", |r: &&Row| r.0.to_string()),
            col("sf", |r: &&Row| r.1.to_string()),
            col("maps", |r: &&Row| r.5),
            col("token_limited_maps", |r: &&Row| r.6),
            col("bytes_requested", |r: &&Row| r.4),
            col("requested_grants", |r: &&Row| r.2.requested_grants),
            col("requested_grant_bytes", |r: &&Row| r.2.requested_bytes),
            col("pgs_grants", |r: &&Row| r.2.pgs_grants),
            col("pgs_grant_bytes", |r: &&Row| r.2.pgs_bytes),
            col("grant_bytes_used", |r: &&Row| r.2.used_bytes),
            col("grant_bytes_unused", |r: &&Row| r.2.unused_bytes),
            col("sent_bytes", |r: &&Row| r.3.tx_bytes),
            col("sent_bps", |r: &&Row| per_s(r.3.tx_bytes as f64 * 8.0)),
        ],
        &rows,
    );
    let flows = Table::from_rows(
        "lld_flows",
        &[
            col("link", |r: &&FlowRow| r.0.to_string()),
            col("flow", |r: &&FlowRow| r.1 as u64),
            col("ll_packets", |r: &&FlowRow| r.2.ll_packets),
            col("sanctioned_packets", |r: &&FlowRow| r.2.sanctioned_packets),
            col("sanctioned_bytes", |r: &&FlowRow| r.2.sanctioned_bytes),
            col("sanctioned_share", |r: &&FlowRow| {
                crate::results::ratio(r.2.sanctioned_packets, r.2.ll_packets)
            }),
        ],
        &flows,
    );
    vec![table, flows]
}
