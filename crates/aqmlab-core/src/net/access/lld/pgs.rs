//! Proactive Grant Service (PGS) for the low-latency service flow: the CMTS grants the
//! LL SF a fixed number of bytes every Guaranteed Grant Interval whether or not it asked
//! (DOCSIS 3.1 MULPI §C.2.2.8.13 Guaranteed Grant Rate, §C.2.2.8.14 Guaranteed Grant
//! Interval, as docsis-ns3 names them, `model/docsis-configuration.h:163-167`). The
//! schedule is docsis-ns3's `CmtsUpstreamScheduler::Start` / `GenerateMap`
//! (`model/cmts-upstream-scheduler.cc:216-300,335-390`): a grant of
//! `ceil(GGR/8 × GGI)` bytes every GGI, the first at `offset` into the first MAP
//! interval, and at each MAP the grants whose times fall inside that interval.
//!
//! docsis-ns3 counts time in minislots and frames: it floors the GGI to whole frames,
//! rounds the grant up to whole minislots and raises the GGR by the MAC header share
//! (`(MeanPacketSize + UsMacHdrSize)/MeanPacketSize`, line 222-227). This model has no
//! minislots, frames or MAC headers, so the GGI is exact and the grant is exactly
//! `ceil(GGR/8 × GGI)` bytes.

use crate::sim::time::{Nanos, NS_PER_S};

#[derive(Clone, Debug)]
pub struct Pgs {
    /// Guaranteed Grant Interval.
    pub interval: Nanos,
    /// Bytes per grant.
    pub bytes: u64,
    /// Time of the next grant not yet scheduled.
    next: Nanos,
}

impl Pgs {
    /// Guaranteed Grant Rate `ggr_bps` every `interval`, the first grant at `first`.
    pub fn new(ggr_bps: u64, interval: Nanos, first: Nanos) -> Self {
        let bytes = (ggr_bps as u128 * interval as u128).div_ceil(8 * NS_PER_S as u128) as u64;
        Pgs {
            interval,
            bytes,
            next: first,
        }
    }

    /// The MAC wakes at MAP boundary `b` after a pause: the schedule goes on from the
    /// first grant time at or after `b`.
    pub fn resume_at(&mut self, b: Nanos) {
        if self.next < b {
            self.next += (b - self.next).div_ceil(self.interval) * self.interval;
        }
    }

    /// The grant times in the MAP interval `[start, end)`, in order: `f(time)` for each.
    pub fn grants_in(&mut self, start: Nanos, end: Nanos, mut f: impl FnMut(Nanos)) {
        debug_assert!(self.next >= start, "a PGS grant before its MAP");
        while self.next < end {
            f(self.next);
            self.next += self.interval;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::{NS_PER_MS, NS_PER_US};

    fn times(p: &mut Pgs, start: Nanos, end: Nanos) -> Vec<Nanos> {
        let mut v = Vec::new();
        p.grants_in(start, end, |t| v.push(t));
        v
    }

    /// GGR 1 Mbit/s every 500 µs: ceil(125 000 B/s × 0.0005 s) = 63 B (62.5 rounded up).
    /// First grant 100 µs into the first 2-ms MAP: 0.1, 0.6, 1.1, 1.6 ms in MAP 0, then
    /// 2.1, 2.6, 3.1, 3.6 ms in MAP 1.
    #[test]
    fn grants_fall_on_schedule_by_hand() {
        let us = NS_PER_US;
        let mut p = Pgs::new(1_000_000, 500 * us, 100 * us);
        assert_eq!(p.bytes, 63);
        assert_eq!(
            times(&mut p, 0, 2 * NS_PER_MS),
            vec![100 * us, 600 * us, 1100 * us, 1600 * us]
        );
        assert_eq!(
            times(&mut p, 2 * NS_PER_MS, 4 * NS_PER_MS),
            vec![2100 * us, 2600 * us, 3100 * us, 3600 * us]
        );
    }

    /// Resuming after a pause keeps the grid: GGI 500 µs from 100 µs, resumed at 6 ms →
    /// next grant 6.1 ms.
    #[test]
    fn resuming_keeps_the_grid() {
        let us = NS_PER_US;
        let mut p = Pgs::new(1_000_000, 500 * us, 100 * us);
        p.resume_at(6000 * us);
        assert_eq!(
            times(&mut p, 6000 * us, 6700 * us),
            vec![6100 * us, 6600 * us]
        );
    }

    /// A GGI longer than the MAP: some MAPs carry no grant. GGI 3 ms, MAP 2 ms, first at
    /// 0: grants at 0, 3, 6 ms fall in MAPs [0,2), [2,4), [6,8) and none in [4,6).
    #[test]
    fn a_long_interval_skips_maps() {
        let ms = NS_PER_MS;
        let mut p = Pgs::new(8_000_000, 3 * ms, 0);
        assert_eq!(p.bytes, 3000);
        assert_eq!(times(&mut p, 0, 2 * ms), vec![0]);
        assert_eq!(times(&mut p, 2 * ms, 4 * ms), vec![3 * ms]);
        assert_eq!(times(&mut p, 4 * ms, 6 * ms), Vec::<Nanos>::new());
        assert_eq!(times(&mut p, 6 * ms, 8 * ms), vec![6 * ms]);
    }
}
