//! Opt-in statistics per child queue of a multi-queue scheduler (one row per flow
//! queue of DRR/SFQ/FQ-CoDel/sfq_codel, one per band of `prio`), reported as the
//! `child_queues` table.
//!
//! Enabled per discipline with `child_stats = true`. When off, the table holds `None`
//! and every update is one predictable branch; when on, each update is a few additions
//! into a preallocated row (no allocation per packet).
//!
//! A discipline with a few named children (DualPI2's L and C queues) can also keep a
//! sojourn histogram per child (`with_named_hists`): with `output.sojourn_hist` each is
//! a `sojourn_hist` row `LINK.NAME`.

use crate::measure::histogram::Histogram;
use crate::scenario::error::Result;
use crate::scenario::params::{ParamDoc, Params};
use crate::sim::time::Nanos;

/// Counters of one child queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChildStats {
    /// Packets the queue accepted.
    pub enqueued: u64,
    /// Packets it handed to the link.
    pub dequeued: u64,
    /// Packets dropped from it, or refused by it (any reason).
    pub drops: u64,
    /// Packets ECN-marked in it.
    pub marks: u64,
    /// Bytes dequeued.
    pub bytes: u64,
    /// Sum and maximum of the sojourn times of the dequeued packets.
    pub sojourn_sum: Nanos,
    pub sojourn_max: Nanos,
}

/// The documentation line shared by every discipline that offers it.
pub const PARAM_DOC: ParamDoc = ParamDoc {
    name: "child_stats",
    ty: "bool",
    default: "false",
    doc: "record per-child-queue statistics (the child_queues table)",
};

/// Per-child counters, or nothing when disabled.
#[derive(Debug, Default)]
pub struct ChildStatsTable {
    rows: Option<Vec<ChildStats>>,
    /// The children's names and sojourn histograms (`with_named_hists`).
    hists: Option<(&'static [&'static str], Vec<Histogram>)>,
}

impl ChildStatsTable {
    pub fn new(enabled: bool, children: usize) -> Self {
        ChildStatsTable {
            rows: enabled.then(|| vec![ChildStats::default(); children]),
            hists: None,
        }
    }

    /// Rows for the children `names`, each with a sojourn histogram as well.
    pub fn with_named_hists(enabled: bool, names: &'static [&'static str]) -> Self {
        ChildStatsTable {
            hists: enabled.then(|| (names, vec![Histogram::new(); names.len()])),
            ..Self::new(enabled, names.len())
        }
    }

    /// Read `child_stats` (default false).
    pub fn from_params(p: &mut Params, children: usize) -> Result<Self> {
        Ok(Self::new(p.bool_or("child_stats", false)?, children))
    }

    #[inline]
    pub fn enqueued(&mut self, q: u32) {
        if let Some(r) = &mut self.rows {
            r[q as usize].enqueued += 1;
        }
    }

    /// Take back an `enqueued` for a packet that was dropped before the scheduler
    /// returned (it was the overflow victim itself): the link does not count it as
    /// accepted either, so the rows still add up to the link's.
    #[inline]
    pub fn refused(&mut self, q: u32) {
        if let Some(r) = &mut self.rows {
            r[q as usize].enqueued -= 1;
        }
    }

    #[inline]
    pub fn dequeued(&mut self, q: u32, size: u32, sojourn: Nanos) {
        if let Some(r) = &mut self.rows {
            let s = &mut r[q as usize];
            s.dequeued += 1;
            s.bytes += size as u64;
            s.sojourn_sum += sojourn;
            s.sojourn_max = s.sojourn_max.max(sojourn);
        }
        if let Some((_, h)) = &mut self.hists {
            h[q as usize].record(sojourn);
        }
    }

    #[inline]
    pub fn dropped(&mut self, q: u32, n: u64) {
        if let Some(r) = &mut self.rows {
            r[q as usize].drops += n;
        }
    }

    #[inline]
    pub fn marked(&mut self, q: u32, n: u64) {
        if let Some(r) = &mut self.rows {
            r[q as usize].marks += n;
        }
    }

    /// Take back a mark of a packet the child then dropped (counted once, as the drop);
    /// a mark counted before `restart` is gone already.
    #[inline]
    pub fn unmarked(&mut self, q: u32) {
        if let Some(r) = &mut self.rows {
            let m = &mut r[q as usize].marks;
            *m = m.saturating_sub(1);
        }
    }

    pub fn rows(&self) -> Option<&[ChildStats]> {
        self.rows.as_deref()
    }

    /// Each named child's sojourn histogram (none without `with_named_hists`).
    pub fn sojourn_hists(&self) -> impl Iterator<Item = (&'static str, &Histogram)> {
        self.hists
            .iter()
            .flat_map(|(names, h)| names.iter().copied().zip(h.iter()))
    }

    /// Zero the counters (end of warm-up), keeping the queues.
    pub fn restart(&mut self) {
        if let Some(r) = &mut self.rows {
            r.iter_mut().for_each(|s| *s = ChildStats::default());
        }
        if let Some((_, h)) = &mut self.hists {
            h.iter_mut().for_each(|x| *x = Histogram::new());
        }
    }
}
