//! Web traffic with page-load-time (PLT) results: `web-page` (the DOCSIS study's page
//! model) and `web-packmime` (PackMime-HTTP). Both run HTTP over the TCP model through
//! `conn.rs` and report `stats.rs`'s PLT columns; `pages_table` gives the opt-in
//! per-page rows.

pub mod conn;
pub mod http;
pub mod packmime;
pub mod packmime_model;
pub mod page;
pub mod stats;

use super::AnyApp;
use crate::output::table::{col, Table};
use crate::scenario::error::Result;
use crate::scenario::params::Params;
use crate::sim::time::{secs, Nanos, NS_PER_S};
use crate::transport::tcp::TcpConfig;
use stats::{FailedPlt, PageLog, PageRow};

pub(crate) use crate::scenario::params::param as p;

/// Settings both web kinds read.
pub(crate) struct Common {
    pub cfg: TcpConfig,
    pub timeout: Nanos,
    pub failed_plt: FailedPlt,
    pub page_rows: bool,
}

pub(crate) fn read_common(p: &mut Params) -> Result<Common> {
    let cfg = crate::app::bulk::tcp::config(p)?;
    let timeout = p.positive_duration_or("timeout", 60 * NS_PER_S)?;
    let failed_plt = match p.choice_or("failed_plt", "censor", &["censor", "exclude"])? {
        "censor" => FailedPlt::Censor,
        _ => FailedPlt::Exclude,
    };
    Ok(Common {
        cfg,
        timeout,
        failed_plt,
        page_rows: p.bool_or("page_rows", false)?,
    })
}

/// The log of a web app, if `a` is one.
fn log_of(a: &AnyApp) -> Option<&PageLog> {
    match a {
        AnyApp::WebPage(w) => Some(&w.log),
        AnyApp::WebPackMime(w) => Some(&w.log),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// `pages`: one row per page of the web entries that asked for them (`page_rows`),
/// in entry, user, page order; None if none did.
pub fn pages_table(apps: &[AnyApp], app_entry: &[u32], names: &[String]) -> Option<Table> {
    let rows: Vec<(u32, &PageRow)> = apps
        .iter()
        .zip(app_entry)
        .filter_map(|(a, &e)| Some((e, log_of(a)?.rows.as_ref()?)))
        .flat_map(|(e, rows)| rows.iter().map(move |r| (e, r)))
        .collect();
    if !apps
        .iter()
        .any(|a| log_of(a).is_some_and(|l| l.rows.is_some()))
    {
        return None;
    }
    Some(Table::from_rows(
        "pages",
        &[
            col("app", |r: &(u32, &PageRow)| names[r.0 as usize].clone()),
            col("user", |r: &(u32, &PageRow)| r.1.user as u64),
            col("page", |r: &(u32, &PageRow)| r.1.page),
            col("start_s", |r: &(u32, &PageRow)| secs(r.1.start)),
            col("plt_s", |r: &(u32, &PageRow)| {
                r.1.plt.map(secs).unwrap_or(f64::NAN)
            }),
            col("failed", |r: &(u32, &PageRow)| r.1.plt.is_none()),
            col("objects", |r: &(u32, &PageRow)| r.1.objects as u64),
            col("bytes", |r: &(u32, &PageRow)| r.1.bytes),
            col("request_bytes", |r: &(u32, &PageRow)| r.1.request_bytes),
        ],
        rows,
    ))
}
