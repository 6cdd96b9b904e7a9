//! The DOCSIS model's own result table, `docsis`: one row per DOCSIS upstream, its
//! request/grant MAC's counters (docs/output.md, "docsis").

use super::mac::MacStats;
use super::Docsis;
use crate::net::access::AnyAccess;
use crate::output::table::{col, Table};
use crate::results::ratio;

type Row<'a> = (&'a str, &'a MacStats);

/// The `docsis` table, present when a link is a DOCSIS upstream.
pub(super) fn tables(links: &[(&str, &AnyAccess)], per_s: &dyn Fn(f64) -> f64) -> Vec<Table> {
    let macs: Vec<Row> = links
        .iter()
        .filter_map(|&(name, m)| {
            let d: &Docsis = m.try_into().ok()?;
            Some((name, d.mac_stats()?))
        })
        .collect();
    if macs.is_empty() {
        return Vec::new();
    }
    let table = Table::from_rows(
        "docsis",
        &[
            col("link", |r: &&Row| r.0.to_string()),
            col("maps", |r: &&Row| r.1.maps),
            col("grants", |r: &&Row| r.1.grants),
            col("grants_capped", |r: &&Row| r.1.grants_capped),
            col("bytes_requested", |r: &&Row| r.1.bytes_requested),
            col("bytes_granted", |r: &&Row| r.1.bytes_granted),
            col("bytes_used", |r: &&Row| r.1.bytes_used),
            col("grant_bytes_mean", |r: &&Row| {
                ratio(r.1.bytes_granted, r.1.grants)
            }),
            col("granted_bps", |r: &&Row| {
                per_s(r.1.bytes_granted as f64 * 8.0)
            }),
            col("requests_contention", |r: &&Row| r.1.requests_contention),
            col("requests_piggyback", |r: &&Row| r.1.requests_piggyback),
            col("fragmented_packets", |r: &&Row| r.1.fragmented_packets),
        ],
        &macs,
    );
    vec![table]
}
