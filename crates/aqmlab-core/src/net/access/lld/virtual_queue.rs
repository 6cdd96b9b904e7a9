//! The upstream low-latency queue-delay estimate `qdelayCoupledV` of DOCSIS 3.1 MULPI
//! (CM-SP-MULPIv3.1) Annex O: a virtual queue (VQ) served at MAX_RATE, as transcribed by
//! CableLabs' docsis-ns3 (`model/dual-queue-coupled-aqm.cc`, commit 02aa242:
//! `QDelayCoupledV` lines 474–492, `AlignVq` with `calcAllowedAQ` lines 515–581,
//! `DecreaseVq` lines 895–903, its use in `DoEnqueue` lines 746–815; defaults
//! `VqInterval` 500 µs and `LgVqEwmaAlph` 7, lines 220–231).
//!
//! A cable modem's real L queue drains only when the CMTS grants it, so its byte count
//! over MAX_RATE overstates the delay the AQM should react to: bytes wait for the
//! request–grant loop whatever the load. The VQ instead drains continuously at
//! MAX_RATE: each arriving L packet adds `8·size/MAX_RATE` and elapsed time removes
//! itself (floored at 0). Every VQ interval the VQ is *aligned*: an EWMA (weight
//! 2^−LG_VQ_EWMA_ALPHA) of the actual L backlog is compared with the backlog the grant
//! loop alone explains, `allowedAQ = loop_delay·(MAX_RATE − GGR)/8 + GGR·PGS_interval/8`
//! bytes (GGR: Guaranteed Grant Rate of Proactive Grant Service); an excess, as delay at
//! MAX_RATE, raises the VQ if it is larger.
//!
//! Sans-IO: the modem calls `qdelay` at each L arrival (with the packet's bytes), and
//! `decrease` for a packet that then did not enter the L queue (sanctioned by Queue
//! Protection or dropped), and `align` every VQ interval with its actual L backlog
//! (queued plus partly sent or staged bytes) and `allowed_aq`. It is docsis-ns3's
//! `QDELAY_COUPLED_V`, which the spec uses upstream (docsis-ns3 defaults to
//! `qdelayCoupledL`, `dual_queue_aqm::qdelay_l`).
//!
//! docsis-ns3's arithmetic is kept: the added delay and the excess delay truncated to
//! whole ns, the EWMA in whole bytes truncated toward zero and floored at 0, the allowed
//! backlog truncated to whole bytes. Its `AllowedAqConstant` (a factor on the PGS term,
//! default 1) is not the spec's and is left out.

use crate::sim::time::{Nanos, NS_PER_S};

/// log2 of the reciprocal EWMA weight of the actual backlog (docsis-ns3 `LgVqEwmaAlph`).
pub const LG_VQ_EWMA_ALPHA: u32 = 7;

/// `calcAllowedAQ`: the L backlog in bytes explained by the request–grant `loop_delay`
/// at MAX_RATE less the guaranteed grant rate, plus one PGS grant interval of GGR.
pub fn allowed_aq(loop_delay: Nanos, max_rate_bps: u64, ggr_bps: u64, pgs_interval: Nanos) -> u64 {
    let s = |t: Nanos| t as f64 / NS_PER_S as f64;
    (s(loop_delay) * max_rate_bps.saturating_sub(ggr_bps) as f64 / 8.0
        + ggr_bps as f64 * s(pgs_interval) / 8.0) as u64
}

#[derive(Clone, Debug)]
pub struct VirtualQueue {
    max_rate_bps: u64,
    /// The VQ's delay, ns, as of `t_last`.
    vq: Nanos,
    t_last: Nanos,
    /// EWMA of the actual L backlog, bytes.
    avg_aq: u64,
}

impl VirtualQueue {
    pub fn new(max_rate_bps: u64) -> Self {
        VirtualQueue {
            max_rate_bps,
            vq: 0,
            t_last: 0,
            avg_aq: 0,
        }
    }

    fn delay_of(&self, bytes: u64) -> Nanos {
        (8 * bytes as u128 * NS_PER_S as u128 / self.max_rate_bps as u128) as Nanos
    }

    /// `qdelayCoupledV(bytes)`: drain the VQ to `now`, add `bytes` (0 to just read it),
    /// and return its delay. 0 without a MAX_RATE.
    pub fn qdelay(&mut self, now: Nanos, bytes: u64) -> Nanos {
        if self.max_rate_bps == 0 {
            return 0;
        }
        self.vq = self.vq.saturating_sub(now - self.t_last) + self.delay_of(bytes);
        self.t_last = now;
        self.vq
    }

    /// Take back `bytes` added by `qdelay` for a packet that did not enter the L queue.
    pub fn decrease(&mut self, bytes: u64) {
        if self.max_rate_bps != 0 {
            self.vq = self.vq.saturating_sub(self.delay_of(bytes));
        }
    }

    /// `AlignVq`, every VQ interval: fold `actual_bytes` (the L backlog now) into the
    /// EWMA; if it exceeds `allowed_bytes`, raise the VQ to the excess's delay at
    /// MAX_RATE when that is larger. Returns whether the VQ was raised.
    pub fn align(&mut self, actual_bytes: u64, allowed_bytes: u64) -> bool {
        let alpha = 1.0 / (1u64 << LG_VQ_EWMA_ALPHA) as f64;
        let diff = actual_bytes as f64 - self.avg_aq as f64;
        self.avg_aq = (self.avg_aq as f64 + alpha * diff).max(0.0) as u64;
        if self.max_rate_bps == 0 || self.avg_aq <= allowed_bytes {
            return false;
        }
        let excess = self.delay_of(self.avg_aq - allowed_bytes);
        if excess > self.vq {
            self.vq = excess;
            return true;
        }
        false
    }

    /// The EWMA of the actual L backlog, bytes.
    pub fn average_backlog(&self) -> u64 {
        self.avg_aq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::{NS_PER_MS, NS_PER_US};

    const US: Nanos = NS_PER_US;
    const MBIT: u64 = 1_000_000;

    #[test]
    fn the_virtual_queue_drains_at_max_rate() {
        // 100 Mb/s: a byte takes 80 ns; 1500 B = 120 000 ns.
        let mut v = VirtualQueue::new(100 * MBIT);
        assert_eq!(v.qdelay(0, 1500), 120_000);
        // 50 µs later: 120 000 − 50 000 + 120 000 = 190 000.
        assert_eq!(v.qdelay(50 * US, 1500), 190_000);
        // Reading (0 bytes) at 100 µs: 140 000.
        assert_eq!(v.qdelay(100 * US, 0), 140_000);
        // At 1 ms it has emptied (floored at 0); + 1000 B = 80 000.
        assert_eq!(v.qdelay(NS_PER_MS, 1000), 80_000);
        // That packet was sanctioned: taken back.
        v.decrease(1000);
        assert_eq!(v.qdelay(NS_PER_MS, 0), 0);
        // 3 B at 7 Mb/s: 24/7e6 s = 3428.57 ns -> 3428 (truncated).
        let mut v = VirtualQueue::new(7 * MBIT);
        assert_eq!(v.qdelay(0, 3), 3428);
        // No MAX_RATE: 0.
        assert_eq!(VirtualQueue::new(0).qdelay(0, 1500), 0);
    }

    #[test]
    fn allowed_backlog_of_the_grant_loop() {
        // Loop delay 2 ms at 100 Mb/s less GGR 10 Mb/s: 0.002·90e6/8 = 22 500 B; plus a
        // 1 ms PGS interval at 10 Mb/s: 1250 B -> 23 750 B.
        assert_eq!(
            allowed_aq(2 * NS_PER_MS, 100 * MBIT, 10 * MBIT, NS_PER_MS),
            23_750
        );
        // Without PGS: 0.002·1e8/8 = 25 000 B.
        assert_eq!(allowed_aq(2 * NS_PER_MS, 100 * MBIT, 0, 0), 25_000);
    }

    #[test]
    fn alignment_raises_the_vq_to_the_excess_backlog() {
        let mut v = VirtualQueue::new(100 * MBIT);
        // EWMA weight 1/128: 0 + 12 800/128 = 100 B; allowed 0: excess 100 B = 8000 ns
        // > VQ 0: raised.
        assert!(v.align(12_800, 0));
        assert_eq!(v.average_backlog(), 100);
        assert_eq!(v.qdelay(0, 0), 8000);
        // 100 + (12 800 − 100)/128 = 199.22 -> 199 B; excess 15 920 ns > 8000: raised.
        assert!(v.align(12_800, 0));
        assert_eq!(v.average_backlog(), 199);
        assert_eq!(v.qdelay(0, 0), 15_920);
        // Below the allowed backlog: nothing. 199 + (0 − 199)/128 = 197.45 -> 197.
        assert!(!v.align(0, 25_000));
        assert_eq!(v.average_backlog(), 197);
        assert_eq!(v.qdelay(0, 0), 15_920);
        // An excess smaller than the VQ leaves it: 12 303 B more (984 240 ns) make the
        // VQ 1 000 160 ns; the EWMA moves to 197 − 197/128 = 195.46 -> 195 B, whose
        // excess 15 600 ns is below it.
        assert_eq!(v.qdelay(0, 12_303), 1_000_160);
        assert!(!v.align(0, 0));
        assert_eq!(v.average_backlog(), 195);
        assert_eq!(v.qdelay(0, 0), 1_000_160);
    }
}
