//! Page-load-time statistics and the per-page log.
//!
//! - Median: for even `n`, the mean of the two middle values.
//! - MAD: `median(|x_i − median(x)|)`, the raw MAD (not scaled by 1.4826).
//! - p95: the nearest-rank 95th percentile, the `⌈0.95·n⌉`-th smallest value (no
//!   interpolation, so it is always a page that was observed).
//! - Failed pages (timed out) count in `pages_failed`; with `failed_plt = "censor"`
//!   (the default) they enter the statistics at the timeout value, so a page that never
//!   loads raises the median instead of vanishing; with `"exclude"` they are left out
//!   of the PLT statistics (but still counted). Pages still loading when the run ends
//!   (and not yet past their timeout) are `pages_unfinished`, outside the statistics.

use crate::output::table::Val;
use crate::sim::time::{secs, Nanos};

/// What happens to failed pages in the PLT statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailedPlt {
    Censor,
    Exclude,
}

/// One page (web-page) or one response (web-packmime).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageRow {
    /// The user (app instance) within the entry.
    pub user: u32,
    pub page: u64,
    /// First request sent.
    pub start: Nanos,
    /// Load time; None if the page failed.
    pub plt: Option<Nanos>,
    pub objects: u32,
    /// Response bytes received (of the whole page).
    pub bytes: u64,
    /// Request payload bytes sent (first sends, not resends).
    pub request_bytes: u64,
}

/// The pages of one app instance.
#[derive(Clone, Debug)]
pub struct PageLog {
    pub user: u32,
    /// Load times of completed pages.
    pub plts: Vec<Nanos>,
    pub failed: u64,
    pub unfinished: u64,
    pub timeout: Nanos,
    pub failed_plt: FailedPlt,
    /// Per-page rows, if asked for (`page_rows = true`).
    pub rows: Option<Vec<PageRow>>,
}

impl PageLog {
    pub fn new(user: u32, timeout: Nanos, failed_plt: FailedPlt, rows: bool) -> Self {
        PageLog {
            user,
            plts: Vec::new(),
            failed: 0,
            unfinished: 0,
            timeout,
            failed_plt,
            rows: rows.then(Vec::new),
        }
    }

    pub fn completed(&mut self, page: u64, start: Nanos, end: Nanos, objects: u32, bytes: u64) {
        self.completed_req(page, start, end, objects, bytes, 0);
    }

    /// A completed page whose requests carried `request_bytes`.
    pub fn completed_req(
        &mut self,
        page: u64,
        start: Nanos,
        end: Nanos,
        objects: u32,
        bytes: u64,
        request_bytes: u64,
    ) {
        self.plts.push(end - start);
        if let Some(r) = &mut self.rows {
            r.push(PageRow {
                user: self.user,
                page,
                start,
                plt: Some(end - start),
                objects,
                bytes,
                request_bytes,
            });
        }
    }

    pub fn failed(&mut self, page: u64, start: Nanos, objects: u32, bytes: u64) {
        self.failed_req(page, start, objects, bytes, 0);
    }

    pub fn failed_req(
        &mut self,
        page: u64,
        start: Nanos,
        objects: u32,
        bytes: u64,
        request_bytes: u64,
    ) {
        self.failed += 1;
        if let Some(r) = &mut self.rows {
            r.push(PageRow {
                user: self.user,
                page,
                start,
                plt: None,
                objects,
                bytes,
                request_bytes,
            });
        }
    }
}

/// Median of sorted values (mean of the two middle ones for even n); NaN if empty.
pub fn median_sorted(x: &[f64]) -> f64 {
    let n = x.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        x[n / 2]
    } else {
        (x[n / 2 - 1] + x[n / 2]) / 2.0
    }
}

/// (median, MAD, nearest-rank p95) of `x`; NaN for an empty sample.
pub fn summary(x: &[f64]) -> (f64, f64, f64) {
    if x.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    let med = median_sorted(&s);
    let mut dev: Vec<f64> = s.iter().map(|v| (v - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let rank = ((0.95 * s.len() as f64).ceil() as usize).clamp(1, s.len());
    (med, median_sorted(&dev), s[rank - 1])
}

/// The PLT columns of an entry from its users' logs.
pub fn report<'a>(logs: impl Iterator<Item = &'a PageLog>, out: &mut Vec<(&'static str, Val)>) {
    let mut x = Vec::new();
    let (mut done, mut failed, mut unfinished) = (0u64, 0u64, 0u64);
    for l in logs {
        x.extend(l.plts.iter().map(|&p| secs(p)));
        done += l.plts.len() as u64;
        failed += l.failed;
        unfinished += l.unfinished;
        if l.failed_plt == FailedPlt::Censor {
            x.extend(std::iter::repeat_n(secs(l.timeout), l.failed as usize));
        }
    }
    let (med, mad, p95) = summary(&x);
    out.push(("plt_s_median", med.into()));
    out.push(("plt_s_mad", mad.into()));
    out.push(("plt_s_p95", p95.into()));
    out.push(("pages_completed", done.into()));
    out.push(("pages_failed", failed.into()));
    out.push(("pages_unfinished", unfinished.into()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: x = 1, 2, 3, 4, 100. Median 3; |x − 3| = 2, 1, 0, 1, 97 →
    /// sorted 0, 1, 1, 2, 97 → MAD 1; p95: ⌈4.75⌉ = 5th smallest = 100.
    #[test]
    fn median_mad_p95_by_hand() {
        assert_eq!(summary(&[4.0, 100.0, 1.0, 3.0, 2.0]), (3.0, 1.0, 100.0));
        // Even n: 1, 2, 3, 10 → median 2.5; deviations 1.5, 0.5, 0.5, 7.5 → MAD 1.0;
        // p95 rank ⌈3.8⌉ = 4 → 10.
        assert_eq!(summary(&[10.0, 1.0, 3.0, 2.0]), (2.5, 1.0, 10.0));
        assert!(summary(&[]).0.is_nan());
    }

    #[test]
    fn failed_pages_are_censored_at_the_timeout_or_excluded() {
        let mut l = PageLog::new(0, 10_000_000_000, FailedPlt::Censor, false);
        l.completed(0, 0, 1_000_000_000, 1, 1);
        l.completed(1, 0, 2_000_000_000, 1, 1);
        l.failed(2, 0, 1, 1);
        let mut out = Vec::new();
        report(std::iter::once(&l), &mut out);
        // 1, 2, 10 → median 2.
        assert_eq!(out[0], ("plt_s_median", Val::F(2.0)));
        assert_eq!(out[4], ("pages_failed", Val::U(1)));
        l.failed_plt = FailedPlt::Exclude;
        let mut out = Vec::new();
        report(std::iter::once(&l), &mut out);
        assert_eq!(out[0], ("plt_s_median", Val::F(1.5)));
        assert_eq!(out[3], ("pages_completed", Val::U(2)));
    }
}
