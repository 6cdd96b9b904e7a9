//! The Low Latency DOCSIS dual-queue coupled AQM of DOCSIS 3.1 MULPI (CM-SP-MULPIv3.1)
//! Annex M, with the queue-delay estimates of Annex O, as transcribed by CableLabs'
//! docsis-ns3 (`model/dual-queue-coupled-aqm.cc`, commit 02aa242), and the generic
//! DualQ coupling of RFC 9332 (§2.4 and Appendix A: `p_CL = k·p'`, `p_L = max(p_native,
//! p_CL)`, the Classic probability `p_C = p'²`).
//!
//! Sans-IO, without the queues (the modem owns them, `net::access::lld`):
//! - **The L queue's immediate AQM (IAQM)**: a ramp of the L queue delay from MINTH to
//!   MAXTH giving the *native* probability `probNative` (`CalcProbNative`, lines
//!   583–600). MAXTH is the Immediate AQM Max Threshold (C.2.2.7.15.4, default
//!   1000 µs, line 155–159), the range `2^LG_RANGE` ns (C.2.2.7.15.5, default 19 =
//!   524.288 µs, lines 142–146); `MINTH = max(MAXTH − RANGE, FLOOR)`, then
//!   `MAXTH = MINTH + RANGE` capped at 65 535 000 ns, where FLOOR, the serialisation
//!   time of two maximum frames, is `2·8·MAX_FRAME_SIZE·1e9/MAX_RATE` ns (MAX_FRAME_SIZE
//!   2000 B, capped at 65 535 000) and `MAX_RATE = min(AMSR, MSR_L)` of those set
//!   (`InitializeParams`, lines 924–967).
//! - **The L queue delay** `qdelayCoupledL = 8·bytes/MAX_RATE` of the L queue's bytes
//!   including the arriving packet (`QDelayCoupledL`, lines 494–507; used at enqueue,
//!   line 759). docsis-ns3's default estimator, and the spec's for the CMTS downstream.
//! - **Coupling**: the Classic queue runs DOCSIS-PIE (`qdisc::docsis_pie::PieCore`, the
//!   same `CalculateDropProb`/`DropEarly` code in docsis-ns3) on the estimate
//!   `qdelayCoupledC` (lines 998–1039): the Classic rate is what the L queue leaves,
//!   `r_C = AMSR − r_L` with `r_L = min(weight·AMSR, MSR_L, L bits sent in the last
//!   INTERVAL / INTERVAL)`, and `r_C ≤ MSR_C`. Its drop probability `p_C` gives the base
//!   probability `p' = √p_C` and the coupled L probability `probCL = min(k·p', 1)`,
//!   k = AQM Coupling Factor (C.2.2.7.17.5, in tenths; default 2.0, lines 160–169;
//!   lines 1134 and 1143).
//! - **Marking**: `probL = max(probNative, min(probCL, 1))`, and a packet is CE-marked
//!   by the deterministic accumulator `recur` (count += probL; mark when count > 1, then
//!   count −= 1), not by a random draw (`Iaqm` and `Recur`, lines 634–643, 878–893).
//!
//! The order at an L arrival (docsis-ns3 `DoEnqueue`, lines 746–815): delay with the
//! packet → probNative → IAQM mark → Queue Protection (`queue_protection`) with that
//! delay and probNative → on a sanction the (possibly marked) packet goes to the Classic
//! queue, through its `drop_early`.
//!
//! Elsewhere: the spec's upstream L-delay estimate `qdelayCoupledV` (`virtual_queue`);
//! the L buffer check and the inter-queue scheduler (the modem's).

use crate::qdisc::docsis_pie::PieCore;
use crate::scenario::error::Result;
use crate::scenario::params::{param, ParamDoc, Params};
use crate::sim::time::{Nanos, NS_PER_S, NS_PER_US};

/// MAX_FRAME_SIZE, bytes (docsis-ns3 `MaxFrameSize`, lines 181–185).
pub const MAX_FRAME_SIZE: u64 = 2000;
/// The largest FLOOR and MAXTH, ns (lines 958 and 964–967).
pub const MAX_THRESHOLD: Nanos = 65_535_000;

/// The AQM's configuration (MULPI C.2.2.7.15.4–5, C.2.2.7.17.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQueueConfig {
    /// Immediate AQM Max Threshold (MAXTH before the FLOOR adjustment).
    pub max_th: Nanos,
    /// Immediate AQM Range Exponent: the ramp spans 2^this ns.
    pub lg_range: u32,
    /// AQM Coupling Factor k.
    pub coupling_factor: f64,
}

impl Default for DualQueueConfig {
    fn default() -> Self {
        DualQueueConfig {
            max_th: 1000 * NS_PER_US,
            lg_range: 19,
            coupling_factor: 2.0,
        }
    }
}

/// The keys `DualQueueConfig::from_params` reads (docs/access/lld-queue-protection.md).
pub const PARAMS: &[ParamDoc] = &[
    param("iaqm_max_threshold", "duration", "1000us", "Immediate AQM Max Threshold MAXTH (MULPI C.2.2.7.15.4): the L delay at which the ramp reaches probability 1; 1us..65535us"),
    param("iaqm_range_exponent", "int", "19", "Immediate AQM Range Exponent (C.2.2.7.15.5): the ramp spans 2^this ns (19: 524.288 us); 0..25"),
    param("coupling_factor", "float", "2.0", "AQM Coupling Factor k (C.2.2.7.17.5): coupled L probability = k·sqrt(Classic drop probability); 0..25.4"),
];

impl DualQueueConfig {
    /// Read the keys of [`PARAMS`] from `p`.
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let d = DualQueueConfig::default();
        let max_th = p.duration_or("iaqm_max_threshold", d.max_th)?;
        if !(NS_PER_US..=65_535 * NS_PER_US).contains(&max_th) {
            return Err(p.error(
                "iaqm_max_threshold",
                format!("{max_th}ns: expected a duration from 1us to 65535us (a 16-bit µs field)"),
            ));
        }
        Ok(DualQueueConfig {
            max_th,
            lg_range: p.u64_or("iaqm_range_exponent", d.lg_range as u64, 0, 25)? as u32,
            coupling_factor: p.f64_or("coupling_factor", d.coupling_factor, 0.0, 25.4)?,
        })
    }
}

/// MAX_RATE of Annex O: the smaller of the ASF's Maximum Sustained Rate (AMSR) and the
/// L service flow's (MSR_L), of those configured (0 = not configured).
pub fn max_rate(amsr_bps: u64, msr_l_bps: u64) -> u64 {
    match (amsr_bps, msr_l_bps) {
        (0, l) => l,
        (a, 0) => a,
        (a, l) => a.min(l),
    }
}

/// `qdelayCoupledL`: the time to send `bytes` at `max_rate_bps` (0 if no rate is set).
pub fn qdelay_l(bytes: u64, max_rate_bps: u64) -> Nanos {
    if max_rate_bps == 0 {
        return 0;
    }
    (8 * bytes as u128 * NS_PER_S as u128 / max_rate_bps as u128) as Nanos
}

/// The rates `qdelayCoupledC` reads, bit/s (0 = not configured).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassicRates {
    pub amsr_bps: u64,
    pub msr_c_bps: u64,
    pub msr_l_bps: u64,
    /// The inter-queue scheduler's L weight, Scheduling Weight/256 (C.2.2.7.17.6;
    /// docsis-ns3 default 230, lines 170–175).
    pub weight: f64,
}

/// `qdelayCoupledC`: the time to send the Classic queue's `bytes` at the rate the L
/// queue leaves, given the L bits sent during the last `interval` (0 if no AMSR).
pub fn qdelay_c(bytes: u64, rates: &ClassicRates, l_bits: u64, interval: Nanos) -> Nanos {
    if rates.amsr_bps == 0 {
        return 0;
    }
    let amsr = rates.amsr_bps as f64;
    let mut r_l = rates.weight * amsr;
    if rates.msr_l_bps != 0 {
        r_l = r_l.min(rates.msr_l_bps as f64);
    }
    r_l = r_l.min(l_bits as f64 * NS_PER_S as f64 / interval as f64);
    let mut r_c = amsr - r_l;
    if rates.msr_c_bps != 0 {
        r_c = r_c.min(rates.msr_c_bps as f64);
    }
    (8.0 * bytes as f64 / r_c * NS_PER_S as f64).round() as Nanos
}

/// The IAQM ramp between MINTH and MAXTH (after the FLOOR adjustment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ramp {
    pub min_th: Nanos,
    pub max_th: Nanos,
}

impl Ramp {
    /// The ramp for a configured MAXTH and range exponent on a flow of `max_rate_bps`.
    pub fn new(max_th: Nanos, lg_range: u32, max_rate_bps: u64) -> Self {
        let range: Nanos = 1 << lg_range;
        let min_th = max_th.saturating_sub(range).max(floor(max_rate_bps));
        Ramp {
            min_th,
            max_th: (min_th + range).min(MAX_THRESHOLD),
        }
    }

    /// `calcProbNative`: 0 up to MINTH, linear to 1 at MAXTH, 1 beyond.
    pub fn prob_native(&self, qdelay: Nanos) -> f64 {
        if qdelay >= self.max_th {
            1.0
        } else if qdelay > self.min_th {
            (qdelay - self.min_th) as f64 / (self.max_th - self.min_th) as f64
        } else {
            0.0
        }
    }
}

/// FLOOR: the serialisation time of two MAX_FRAME_SIZE frames at `max_rate_bps`, ns,
/// at most 65 535 000 (0 if no rate is set).
pub fn floor(max_rate_bps: u64) -> Nanos {
    if max_rate_bps == 0 {
        return 0;
    }
    (2 * 8 * MAX_FRAME_SIZE * NS_PER_S / max_rate_bps).min(MAX_THRESHOLD)
}

/// `probCL = min(k·√p_C, 1)`: the Classic drop probability coupled into the L queue.
pub fn prob_cl(k: f64, classic_drop_prob: f64) -> f64 {
    (k * classic_drop_prob.sqrt()).min(1.0)
}

/// `probL = max(probNative, min(probCL, 1))`.
pub fn prob_l(prob_native: f64, prob_cl: f64) -> f64 {
    prob_native.max(prob_cl.min(1.0))
}

/// What the AQM decided for a packet arriving at the L queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LArrival {
    /// The L queue delay with the packet (`qdelayCoupledL`).
    pub qdelay: Nanos,
    pub prob_native: f64,
    pub prob_l: f64,
    /// CE-mark it (ECN-capable L packets; `recur(probL)`).
    pub mark: bool,
}

/// The dual-queue coupled AQM of one aggregate service flow: the IAQM ramp and marking
/// state of the L queue and the DOCSIS-PIE state of the Classic queue.
#[derive(Debug)]
pub struct DualQueueAqm {
    pub ramp: Ramp,
    pub coupling_factor: f64,
    pub max_rate_bps: u64,
    /// The Classic queue's DOCSIS-PIE; `update` it every `tupdate` with `qdelay_c`.
    pub classic: PieCore,
    /// `recur`'s accumulated likelihood.
    count: f64,
}

impl DualQueueAqm {
    pub fn new(cfg: &DualQueueConfig, max_rate_bps: u64) -> Self {
        DualQueueAqm {
            ramp: Ramp::new(cfg.max_th, cfg.lg_range, max_rate_bps),
            coupling_factor: cfg.coupling_factor,
            max_rate_bps,
            classic: PieCore::new(),
            count: 0.0,
        }
    }

    /// The coupled L probability from the Classic queue's current drop probability.
    pub fn prob_cl(&self) -> f64 {
        prob_cl(self.coupling_factor, self.classic.drop_prob())
    }

    /// `qdelayCoupledL` of an L queue holding `l_bytes` (with the arriving packet).
    pub fn qdelay_l(&self, l_bytes: u64) -> Nanos {
        qdelay_l(l_bytes, self.max_rate_bps)
    }

    /// A packet arrives at the L queue whose delay estimate with it is `qdelay`
    /// (`qdelay_l`, or upstream the virtual queue's `qdelayCoupledV`).
    pub fn on_l_arrival(&mut self, qdelay: Nanos) -> LArrival {
        let prob_native = self.ramp.prob_native(qdelay);
        let prob_l = prob_l(prob_native, self.prob_cl());
        LArrival {
            qdelay,
            prob_native,
            prob_l,
            mark: self.recur(prob_l),
        }
    }

    /// `recur`: deterministic marking at rate `likelihood`.
    fn recur(&mut self, likelihood: f64) -> bool {
        self.count += likelihood;
        if self.count > 1.0 {
            self.count -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;
    use serde_json::json;

    const MBIT: u64 = 1_000_000;

    #[test]
    fn max_rate_is_the_smaller_configured_rate() {
        assert_eq!(max_rate(0, 0), 0);
        assert_eq!(max_rate(100 * MBIT, 0), 100 * MBIT);
        assert_eq!(max_rate(0, 50 * MBIT), 50 * MBIT);
        assert_eq!(max_rate(100 * MBIT, 50 * MBIT), 50 * MBIT);
    }

    #[test]
    fn ramp_probability_at_minth_midpoint_and_maxth() {
        // 100 Mb/s: FLOOR = 2·8·2000·1e9/1e8 = 320 000 ns; RANGE = 2^19 = 524 288 ns;
        // MINTH = max(1 000 000 − 524 288, 320 000) = 475 712; MAXTH = 1 000 000.
        let r = Ramp::new(1000 * NS_PER_US, 19, 100 * MBIT);
        assert_eq!(floor(100 * MBIT), 320_000);
        assert_eq!((r.min_th, r.max_th), (475_712, 1_000_000));
        assert_eq!(r.prob_native(0), 0.0);
        assert_eq!(r.prob_native(475_712), 0.0); // MINTH itself: 0 (strict >)
        assert_eq!(r.prob_native(475_712 + 262_144), 0.5); // midpoint 737 856
        assert_eq!(r.prob_native(475_712 + 393_216), 0.75);
        assert_eq!(r.prob_native(999_999), 524_287.0 / 524_288.0);
        assert_eq!(r.prob_native(1_000_000), 1.0); // MAXTH
        assert_eq!(r.prob_native(50_000_000), 1.0);
    }

    #[test]
    fn the_floor_lifts_the_ramp_on_slow_flows() {
        // 10 Mb/s: FLOOR = 3 200 000 ns > 475 712, so MINTH = 3.2 ms and MAXTH =
        // 3 724 288 ns: a 1 ms MAXTH would mark two back-to-back frames.
        let r = Ramp::new(1000 * NS_PER_US, 19, 10 * MBIT);
        assert_eq!((r.min_th, r.max_th), (3_200_000, 3_724_288));
        assert_eq!(r.prob_native(3_200_000 + 262_144), 0.5);
        // 0.4 Mb/s: FLOOR = 80 ms, capped at 65.535 ms, and MAXTH capped there too: a
        // step at 65 535 000 ns.
        let r = Ramp::new(1000 * NS_PER_US, 19, 400_000);
        assert_eq!((r.min_th, r.max_th), (MAX_THRESHOLD, MAX_THRESHOLD));
        assert_eq!(r.prob_native(MAX_THRESHOLD - 1), 0.0);
        assert_eq!(r.prob_native(MAX_THRESHOLD), 1.0);
        // No rate configured: FLOOR 0. A range wider than MAXTH starts the ramp at 0:
        // MAXTH 100 µs, RANGE 2^17 = 131 072 ns -> MINTH 0, MAXTH 131 072.
        let r = Ramp::new(100 * NS_PER_US, 17, 0);
        assert_eq!((r.min_th, r.max_th), (0, 131_072));
        assert_eq!(r.prob_native(65_536), 0.5);
    }

    /// Property, over random rates, thresholds and delays: probNative is in [0, 1], 0 up
    /// to MINTH, 1 from MAXTH, and never decreases with the delay; MINTH ≥ FLOOR and
    /// MINTH ≤ MAXTH ≤ 65.535 ms.
    #[test]
    fn property_the_ramp_is_monotone_and_bounded() {
        let mut g = crate::sim::rng::Rng::stream(5, "ramp");
        for case in 0..500 {
            let rate = g.below(1000 * MBIT);
            let r = Ramp::new(1 + g.below(65_535_000), g.below(26) as u32, rate);
            assert!(r.min_th >= floor(rate) && r.min_th <= r.max_th && r.max_th <= MAX_THRESHOLD);
            let mut prev = 0.0;
            let mut d = 0;
            while d < r.max_th + 1_000_000 {
                let p = r.prob_native(d);
                assert!((0.0..=1.0).contains(&p) && p >= prev, "case {case} at {d}");
                assert!(d > r.min_th || p == 0.0);
                assert!(d < r.max_th || p == 1.0);
                prev = p;
                d += 1 + g.below(r.max_th / 50 + 1);
            }
        }
    }

    #[test]
    fn l_queue_delay_from_its_bytes() {
        // 1500 B at 100 Mb/s: 120 µs; 12 500 B: 1 ms; no rate: 0.
        assert_eq!(qdelay_l(1500, 100 * MBIT), 120_000);
        assert_eq!(qdelay_l(12_500, 100 * MBIT), NS_PER_MS);
        assert_eq!(qdelay_l(12_500, 0), 0);
    }

    #[test]
    fn classic_delay_at_the_rate_the_l_queue_leaves() {
        let rates = ClassicRates {
            amsr_bps: 100 * MBIT,
            msr_c_bps: 0,
            msr_l_bps: 0,
            weight: 230.0 / 256.0,
        };
        let i = 16 * NS_PER_MS;
        // No L traffic: r_C = AMSR; 100 000 B = 800 000 bit at 1e8 b/s = 8 ms.
        assert_eq!(qdelay_c(100_000, &rates, 0, i), 8 * NS_PER_MS);
        // 320 000 L bits in 16 ms = 20 Mb/s < 230/256·1e8: r_C = 80 Mb/s -> 10 ms.
        assert_eq!(qdelay_c(100_000, &rates, 320_000, i), 10 * NS_PER_MS);
        // L sending 200 Mb/s: r_L = 230/256·1e8 = 89 843 750, r_C = 10 156 250;
        // 800 000/10 156 250 s = 78 769 230.77 ns -> 78 769 231.
        assert_eq!(qdelay_c(100_000, &rates, 3_200_000, i), 78_769_231);
        // MSR_C = 50 Mb/s caps r_C: 800 000/5e7 = 16 ms.
        let capped = ClassicRates {
            msr_c_bps: 50 * MBIT,
            ..rates
        };
        assert_eq!(qdelay_c(100_000, &capped, 0, i), 16 * NS_PER_MS);
        // MSR_L = 10 Mb/s caps r_L: r_C = 90 Mb/s; 900 000 B = 7.2e6 bit -> 80 ms.
        let l_capped = ClassicRates {
            msr_l_bps: 10 * MBIT,
            ..rates
        };
        assert_eq!(qdelay_c(900_000, &l_capped, 3_200_000, i), 80 * NS_PER_MS);
        // No AMSR: 0.
        let none = ClassicRates {
            amsr_bps: 0,
            ..rates
        };
        assert_eq!(qdelay_c(100_000, &none, 0, i), 0);
    }

    #[test]
    fn coupling_and_the_l_probability_is_the_max() {
        // p_C = 0.01 -> p' = 0.1 -> k·p' = 0.2 with k = 2.
        assert!((prob_cl(2.0, 0.01) - 0.2).abs() < 1e-15);
        // p_C = 0.36 -> p' = 0.6 -> 1.2, capped at 1.
        assert_eq!(prob_cl(2.0, 0.36), 1.0);
        // DOCSIS-PIE's drop_prob may reach 13.6: still 1.
        assert_eq!(prob_cl(2.0, 13.6), 1.0);
        assert_eq!(prob_cl(2.0, 0.0), 0.0);
        // max(native, coupled)
        assert_eq!(prob_l(0.5, 0.25), 0.5);
        assert_eq!(prob_l(0.125, 0.25), 0.25);
        assert_eq!(prob_l(0.0, 1.5), 1.0);
    }

    #[test]
    fn recur_marks_deterministically() {
        // probL 0.25 (the Classic coupled at p_C = 1/64: 2·√(1/64) = 0.25, native 0):
        // count 0.25, 0.5, 0.75, 1.0 (not > 1), 1.25 -> mark at the 5th, then every 4th.
        let mut a = DualQueueAqm::new(&DualQueueConfig::default(), 100 * MBIT);
        a.classic = classic_at(1.0 / 64.0);
        assert_eq!(a.prob_cl(), 0.25);
        let marks: Vec<usize> = (1..=13)
            .filter(|_| a.on_l_arrival(a.qdelay_l(1500)).mark)
            .collect();
        assert_eq!(marks, vec![5, 9, 13]);
        // probL 1 (queue past MAXTH): the first packet is not marked (count 1, not > 1),
        // every later one is.
        let mut a = DualQueueAqm::new(&DualQueueConfig::default(), 100 * MBIT);
        let arrivals: Vec<bool> = (0..4)
            .map(|_| a.on_l_arrival(a.qdelay_l(20_000)).mark)
            .collect();
        assert_eq!(arrivals, vec![false, true, true, true]);
    }

    #[test]
    fn an_l_arrival_combines_delay_ramp_and_coupling() {
        // 100 Mb/s, L queue 9223 B with the packet: 8·9223 bit·10 ns/bit = 737 840 ns
        // -> probNative = (737 840 − 475 712)/524 288 = 262 128/524 288.
        let mut a = DualQueueAqm::new(&DualQueueConfig::default(), 100 * MBIT);
        let l = a.on_l_arrival(a.qdelay_l(9223));
        assert_eq!(l.qdelay, 737_840);
        assert_eq!(l.prob_native, 262_128.0 / 524_288.0);
        assert_eq!(l.prob_l, l.prob_native); // Classic idle: probCL 0
                                             // Classic at p_C = 0.36: probCL = 1 > native: probL = 1.
        a.classic = classic_at(0.36);
        let l = a.on_l_arrival(a.qdelay_l(9223));
        assert_eq!((l.prob_native, l.prob_l), (262_128.0 / 524_288.0, 1.0));
    }

    /// A Classic DOCSIS-PIE whose drop probability is `p` (the update law itself is
    /// checked in `the_classic_update_feeds_the_coupling`).
    fn classic_at(p: f64) -> PieCore {
        let mut c = PieCore::new();
        c.set_drop_prob(p);
        c
    }

    #[test]
    fn the_classic_update_feeds_the_coupling() {
        // Idle Classic queue, then one update at qdelay 20 ms (old 0): RFC 8034 law
        // p = 0.25·(0.020 − 0.010) + 2.5·(0.020 − 0) = 0.0525, scaled by 1/2048 below
        // 1e-6: drop_prob = 0.0525/2048 = 2.5634765625e-5; probCL = 2·√that.
        let mut a = DualQueueAqm::new(&DualQueueConfig::default(), 100 * MBIT);
        a.classic.update(20 * NS_PER_MS);
        let p = 0.0525 / 2048.0;
        assert!((a.classic.drop_prob() - p).abs() < 1e-18);
        assert!((a.prob_cl() - 2.0 * p.sqrt()).abs() < 1e-15);
    }

    fn read(v: serde_json::Value) -> Result<DualQueueConfig> {
        let map = v.as_object().unwrap().clone();
        let mut p = Params::new("links.0.model", &map, &[]);
        let c = DualQueueConfig::from_params(&mut p)?;
        p.finish("test")?;
        Ok(c)
    }

    #[test]
    fn parameters_and_their_errors() {
        assert_eq!(read(json!({})).unwrap(), DualQueueConfig::default());
        let c = read(
            json!({"iaqm_max_threshold": "2ms", "iaqm_range_exponent": 20, "coupling_factor": 1.5}),
        )
        .unwrap();
        assert_eq!(
            c,
            DualQueueConfig {
                max_th: 2 * NS_PER_MS,
                lg_range: 20,
                coupling_factor: 1.5
            }
        );
        for (bad, key) in [
            (
                json!({"iaqm_max_threshold": "70ms"}),
                "links.0.model.iaqm_max_threshold",
            ),
            (
                json!({"iaqm_range_exponent": 26}),
                "links.0.model.iaqm_range_exponent",
            ),
            (
                json!({"coupling_factor": 30}),
                "links.0.model.coupling_factor",
            ),
        ] {
            let e = read(bad).unwrap_err();
            assert_eq!(e.path, key, "{e}");
        }
    }
}
