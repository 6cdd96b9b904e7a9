//! Queue Protection (QProt) of the Low Latency DOCSIS low-latency service flow: the
//! per-microflow queuing score and the sanction (redirect to the Classic queue) of
//! DOCSIS 3.1 MULPI (CM-SP-MULPIv3.1) Annex P, as transcribed by CableLabs' docsis-ns3
//! (`model/queue-protection.cc`, commit 02aa242: `PickBucket` lines 224–312 = the spec's
//! `pick_bucket`, `GetCongestionScore`/`FillBucket` lines 314–354 = `fill_bucket`,
//! `QueueProtect` lines 356–418 = `qprotect`) and explained by Briscoe & White, "The
//! DOCSIS Queue Protection Algorithm to Preserve Low Latency" (RFC 9957, formerly
//! draft-briscoe-docsis-q-protection).
//!
//! Sans-IO: the modem calls [`QueueProtection::on_arrival`] for every packet classified
//! to the low-latency (L) queue, *before* enqueuing it, with the L queue's delay
//! including the packet (`qdelayCoupledL(qL.byte_length + packet.size)`, Annex M/O) and
//! the immediate AQM's native probability for that delay (`calcProbNative`,
//! `dual_queue_aqm::Ramp`). The verdict says where the packet goes. Nothing happens at
//! dequeue: the score is kept as an *expiry time*, so it drains by itself.
//!
//! The algorithm, per microflow (5-tuple; here the flow id and direction):
//! - `pick_bucket`: the flow's hash `h32` names `ATTEMPTS` = 2 candidate buckets, each
//!   from the next `BI_SIZE` = 5 bits (32 buckets). A bucket the flow owns is used (its
//!   expiry reset to now if past); otherwise the first *expired* candidate is recycled
//!   (expiry = now), only after all candidates were checked for ownership; if none is
//!   free the flow shares the one default bucket (index 32), reset only if expired.
//!   The chosen bucket is claimed for the flow either way.
//! - `fill_bucket`: the score is `t_exp − now` (ns). Each packet adds
//!   `probNative · size / AGING`, with `AGING = 2^(LG_AGING−30)` B/ns (`LG_AGING` =
//!   QPDrainRateExponent, default 19: the score drains at 2^19 B/s of "congestion
//!   bytes", i.e. one byte at probability 1 adds 2^11 = 2048 ns), capped at
//!   `MAX_QLSCORE` = 5 s; time drains it at 1 ns/ns.
//! - `qprotect`: sanction iff `qdelay > CRITICALqL` **and**
//!   `qdelay · qLscore > CRITICALqL · CRITICALqLSCORE` (the flow's score weighted by how
//!   far the queue is past its critical delay). The packet's own contribution is added
//!   before the test, so a sanctioned packet still counts in its flow's score: a flow
//!   keeps being sanctioned until its score drains.
//!
//! Parameters (MULPI C.2.2.7.17.7–10, names and defaults per docsis-ns3
//! `model/docsis-configuration.h` lines 255–267 and `queue-protection.cc` lines 72–97):
//! QPEnable (on), QPLatencyThreshold = CRITICALqL (default: the immediate AQM's
//! effective MAXTH), QPQueuingScoreThreshold = CRITICALqLSCORE (4000 µs),
//! QPDrainRateExponent = LG_AGING (19). Constants: `T_RES` = 1 ns (docsis-ns3 default
//! `TRes`), `BI_SIZE` = 5 (`BucketIdSize`), `ATTEMPTS` = 2, `MAX_QLSCORE` = 5 s.
//!
//! Our choices: the microflow id is the flow id and direction (a link is one-way, so
//! this is its 5-tuple), its hash is the packet's 5-tuple hash mixed with the direction
//! and a salt (docsis-ns3's `Perturbation`, default 0), not the spec's unspecified
//! hash; `t_exp` is a u64 of ns from the run's start, which the spec allows instead of
//! periodic recalibration (docsis-ns3 `queue-protection.h` lines 186–191).

use crate::net::packet::Packet;
use crate::qdisc::classify::salted_hash;
use crate::scenario::error::Result;
use crate::scenario::params::{param, ParamDoc, Params};
use crate::sim::time::{Nanos, NS_PER_S, NS_PER_US};

/// Bits of the hash per bucket index (`BI_SIZE`).
pub const BI_SIZE: u32 = 5;
/// Buckets a flow can own (`NBUCKETS` = 2^BI_SIZE); index `NBUCKETS` is the default bucket.
pub const NBUCKETS: usize = 1 << BI_SIZE;
/// Candidate buckets checked per packet (`ATTEMPTS`).
pub const ATTEMPTS: u32 = 2;
/// Cap of a bucket's score (`MAX_QLSCORE`, 5 s).
pub const MAX_QLSCORE: Nanos = 5 * NS_PER_S;

/// Where a packet classified to the L queue goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Into the low-latency queue.
    LowLatency,
    /// Redirected to the Classic queue (`EXIT_SANCTION`).
    Sanction,
}

/// A packet's verdict and the state behind it (docsis-ns3's Success/Sanction traces);
/// with QP disabled, `LowLatency` in bucket `NBUCKETS` with score 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub verdict: Verdict,
    /// The bucket used, `0..=NBUCKETS` (`NBUCKETS`: the shared default bucket).
    pub bucket: usize,
    /// The bucket's queuing score after this packet (`qLscore` = t_exp − now), ns.
    pub score: Nanos,
}

/// Queue Protection's configuration (MULPI C.2.2.7.17.7–10).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QpConfig {
    /// QPEnable: off, every packet stays in the L queue and no state is kept.
    pub enabled: bool,
    /// QPLatencyThreshold (CRITICALqL); `None`: the immediate AQM's effective MAXTH.
    pub latency_threshold: Option<Nanos>,
    /// QPQueuingScoreThreshold (CRITICALqLSCORE), ns of score.
    pub score_threshold: Nanos,
    /// QPDrainRateExponent (LG_AGING): the score drains at 2^LG_AGING congestion-B/s.
    pub drain_rate_exponent: u32,
}

impl Default for QpConfig {
    fn default() -> Self {
        QpConfig {
            enabled: true,
            latency_threshold: None,
            score_threshold: 4000 * NS_PER_US,
            drain_rate_exponent: 19,
        }
    }
}

/// The keys `QpConfig::from_params` reads (docs/access/lld-queue-protection.md).
pub const PARAMS: &[ParamDoc] = &[
    param("qp_enable", "bool", "true", "QPEnable (MULPI C.2.2.7.17.7): Queue Protection on the low-latency service flow"),
    param("qp_latency_threshold", "duration", "MAXTH of the immediate AQM", "QPLatencyThreshold, CRITICALqL (C.2.2.7.17.8): no sanction while the L queue delay is at most this; 1us..65534us"),
    param("qp_queuing_score_threshold", "duration", "4000us", "QPQueuingScoreThreshold, CRITICALqLSCORE (C.2.2.7.17.9): the score that triggers a sanction at qdelay = CRITICALqL; 1us..65534us"),
    param("qp_drain_rate_exponent", "int", "19", "QPDrainRateExponent, LG_AGING (C.2.2.7.17.10): the score drains at 2^this congestion-bytes/s; 1..30"),
];

/// The largest µs value of the 16-bit µs fields (65535 is reserved in the TLVs).
const MAX_US_FIELD: Nanos = 65_534 * NS_PER_US;

impl QpConfig {
    /// Read the `qp_*` keys of `p` (see [`PARAMS`]).
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let d = QpConfig::default();
        let enabled = p.bool_or("qp_enable", d.enabled)?;
        let latency_threshold = p.duration("qp_latency_threshold")?;
        if let Some(t) = latency_threshold {
            us_field(p, "qp_latency_threshold", t)?;
        }
        let score_threshold = p.duration_or("qp_queuing_score_threshold", d.score_threshold)?;
        us_field(p, "qp_queuing_score_threshold", score_threshold)?;
        let drain_rate_exponent = p.u64_or("qp_drain_rate_exponent", 19, 1, 30)? as u32;
        Ok(QpConfig {
            enabled,
            latency_threshold,
            score_threshold,
            drain_rate_exponent,
        })
    }
}

/// A 16-bit µs TLV field: 1 µs to 65534 µs.
fn us_field(p: &Params, name: &str, t: Nanos) -> Result<()> {
    if !(NS_PER_US..=MAX_US_FIELD).contains(&t) {
        return Err(p.error(
            name,
            format!("{t}ns: expected a duration from 1us to 65534us (a 16-bit µs field)"),
        ));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    /// The microflow that last claimed it.
    owner: Option<u64>,
    /// Expiry time of its score (`t_exp`), ns.
    t_exp: Nanos,
}

/// Queue Protection state of one low-latency service flow.
#[derive(Clone, Debug)]
pub struct QueueProtection {
    enabled: bool,
    critical_ql: Nanos,
    critical_score: Nanos,
    /// `1/AGING` in ns per byte at probability 1: 2^(30 − LG_AGING).
    ns_per_byte: u64,
    salt: u32,
    buckets: [Bucket; NBUCKETS + 1],
    /// Packets sanctioned so far, and their bytes.
    pub sanctioned: u64,
    pub sanctioned_bytes: u64,
}

impl QueueProtection {
    /// QProt for `cfg`, with CRITICALqL defaulting to the immediate AQM's effective
    /// `max_th` (`dual_queue_aqm::Ramp::max_th`).
    pub fn new(cfg: &QpConfig, max_th: Nanos) -> Self {
        QueueProtection {
            enabled: cfg.enabled,
            critical_ql: cfg.latency_threshold.unwrap_or(max_th),
            critical_score: cfg.score_threshold,
            ns_per_byte: 1 << (30 - cfg.drain_rate_exponent),
            salt: 0,
            buckets: [Bucket {
                owner: None,
                t_exp: 0,
            }; NBUCKETS + 1],
            sanctioned: 0,
            sanctioned_bytes: 0,
        }
    }

    /// Salt the microflow hash (docsis-ns3's `Perturbation`; default 0).
    pub fn set_salt(&mut self, salt: u32) {
        self.salt = salt;
    }

    pub fn critical_ql(&self) -> Nanos {
        self.critical_ql
    }

    /// The microflow id and hash of `pkt`: its flow and direction.
    pub fn microflow(&self, pkt: &Packet) -> (u64, u32) {
        let dir = pkt.reverse as u32;
        let id = (pkt.flow as u64) << 1 | dir as u64;
        (
            id,
            salted_hash(pkt.hash ^ dir.wrapping_mul(0x9E37_79B9), self.salt),
        )
    }

    /// `qprotect` for `pkt`, arriving at `now` at an L queue whose delay with it is
    /// `qdelay`, with native probability `prob_native`. Its size is the IP datagram's
    /// (docsis-ns3 counts the frame: `max(IP size, 46)` + 18 B of Ethernet header and
    /// FCS + the DOCSIS MAC header, `docsis-queue-disc-item.cc` lines 116–123; use
    /// `qprotect` to count other bytes).
    pub fn on_arrival(
        &mut self,
        now: Nanos,
        pkt: &Packet,
        qdelay: Nanos,
        prob_native: f64,
    ) -> Outcome {
        let (uflow, h32) = self.microflow(pkt);
        self.qprotect(now, uflow, h32, pkt.size, qdelay, prob_native)
    }

    /// `qprotect` for a packet of `bytes` of microflow `uflow` with hash `h32`.
    pub fn qprotect(
        &mut self,
        now: Nanos,
        uflow: u64,
        h32: u32,
        bytes: u32,
        qdelay: Nanos,
        prob_native: f64,
    ) -> Outcome {
        if !self.enabled {
            return Outcome {
                verdict: Verdict::LowLatency,
                bucket: NBUCKETS,
                score: 0,
            };
        }
        let bucket = self.pick_bucket(now, uflow, h32);
        let score = self.fill_bucket(now, bucket, bytes, prob_native);
        let verdict = if self.exceeds(qdelay, score) {
            self.sanctioned += 1;
            self.sanctioned_bytes += bytes as u64;
            Verdict::Sanction
        } else {
            Verdict::LowLatency
        };
        Outcome {
            verdict,
            bucket,
            score,
        }
    }

    /// The sanction test: `qdelay > CRITICALqL && qdelay·score > CRITICALqL·CRITICALqLSCORE`.
    fn exceeds(&self, qdelay: Nanos, score: Nanos) -> bool {
        qdelay > self.critical_ql
            && qdelay as u128 * score as u128
                > self.critical_ql as u128 * self.critical_score as u128
    }

    /// `pick_bucket`.
    fn pick_bucket(&mut self, now: Nanos, uflow: u64, h32: u32) -> usize {
        let mut h32 = h32;
        let mut hsav = NBUCKETS;
        for _ in 0..ATTEMPTS {
            let h = (h32 as usize) & (NBUCKETS - 1);
            let b = &mut self.buckets[h];
            if b.owner == Some(uflow) {
                b.t_exp = b.t_exp.max(now);
                return h;
            }
            if hsav == NBUCKETS && b.t_exp <= now {
                hsav = h;
            }
            h32 >>= BI_SIZE;
        }
        // Recycle the expired candidate (score 0), or share the default bucket, whose
        // score restarts only once expired.
        let b = &mut self.buckets[hsav];
        b.t_exp = b.t_exp.max(now);
        b.owner = Some(uflow);
        hsav
    }

    /// `fill_bucket`: add the packet's congestion score, cap it, return `t_exp − now`.
    fn fill_bucket(&mut self, now: Nanos, bucket: usize, bytes: u32, prob_native: f64) -> Nanos {
        let fill = self.fill(bytes, prob_native);
        let b = &mut self.buckets[bucket];
        b.t_exp = (b.t_exp + fill).min(now + MAX_QLSCORE);
        b.t_exp - now
    }

    /// `probNative · size / AGING` in ns, truncated (docsis-ns3 `GetCongestionScore`).
    fn fill(&self, bytes: u32, prob_native: f64) -> Nanos {
        (prob_native * bytes as f64 * self.ns_per_byte as f64) as Nanos
    }

    /// The score of bucket `bucket` at `now` (0 once expired).
    pub fn score(&self, now: Nanos, bucket: usize) -> Nanos {
        self.buckets[bucket].t_exp.saturating_sub(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::Rng;
    use serde_json::json;

    const US: Nanos = NS_PER_US;
    /// The defaults: CRITICALqL = MAXTH = 1 ms (MAXTH_us 1000, docsis-ns3
    /// `dual-queue-coupled-aqm.cc` line 157), CRITICALqLSCORE = 4 ms, LG_AGING 19, so
    /// CRITICALqLPRODUCT = 1e6 · 4e6 = 4e12 ns² and 1 byte at probability 1 = 2048 ns.
    fn qp() -> QueueProtection {
        QueueProtection::new(&QpConfig::default(), 1000 * US)
    }

    /// A hash whose first candidate is `a` and second `b`.
    fn h(a: u32, b: u32) -> u32 {
        a | b << BI_SIZE
    }

    #[test]
    fn a_flow_below_the_critical_delay_is_never_sanctioned() {
        // A well-behaved flow: 1500 B every 120 µs (100 Mb/s), the queue at 0.9 ms
        // (below CRITICALqL) and the ramp at probability 1: score grows by 3 072 000 ns
        // a packet, capped at 5 s, yet the delay condition never holds.
        let mut q = qp();
        for i in 0..10_000u64 {
            let o = q.qprotect(i * 120 * US, 7, 0x1234_5678, 1500, 900 * US, 1.0);
            assert_eq!(o.verdict, Verdict::LowLatency, "packet {i}");
        }
        assert_eq!(q.sanctioned, 0);
    }

    #[test]
    fn a_flow_with_low_probability_is_never_sanctioned() {
        // probNative 1/64, 1000 B every 200 µs, qdelay 2 ms: each packet adds
        // 1000·2048/64 = 32 000 ns, time drains 200 000 ns between packets, so the
        // score is reset to 32 000 at every packet; 2e6 · 32 000 = 6.4e10 < 4e12.
        let mut q = qp();
        for i in 0..1000u64 {
            let o = q.qprotect(i * 200 * US, 1, 99, 1000, 2000 * US, 1.0 / 64.0);
            assert_eq!(o.score, 32_000);
            assert_eq!(o.verdict, Verdict::LowLatency);
        }
    }

    #[test]
    fn a_rising_score_crosses_the_threshold_at_the_fifth_packet() {
        // probNative 0.25, 1500 B: fill = 0.25·1500·2048 = 768 000 ns per packet;
        // arrivals every 100 µs at qdelay 1.2 ms. From an empty bucket at t0 = 0:
        // t_exp after packet n = n·768 000, now = (n−1)·100 000, so
        // score_n = 668 000·n + 100 000: 768 000, 1 436 000, 2 104 000, 2 772 000,
        // 3 440 000, 4 108 000. Sanction iff 1.2e6·score > 4e12, i.e. score > 3 333 333.3:
        // first at packet 5.
        let mut q = qp();
        let expect = [
            768_000, 1_436_000, 2_104_000, 2_772_000, 3_440_000, 4_108_000,
        ];
        for (i, &s) in expect.iter().enumerate() {
            let o = q.qprotect(i as u64 * 100 * US, 3, 5, 1500, 1200 * US, 0.25);
            assert_eq!(o.score, s, "packet {}", i + 1);
            let want = if i + 1 >= 5 {
                Verdict::Sanction
            } else {
                Verdict::LowLatency
            };
            assert_eq!(o.verdict, want, "packet {}", i + 1);
        }
        assert_eq!((q.sanctioned, q.sanctioned_bytes), (2, 3000));
    }

    #[test]
    fn aging_trace() {
        // One flow, bucket 5 (hash 5), qdelay 0.5 ms unless noted. Score s = t_exp − now.
        let mut q = qp();
        let mut at =
            |t: Nanos, bytes: u32, p: f64, qdelay: Nanos| q.qprotect(t, 1, 5, bytes, qdelay, p);
        // t=0, 1500 B, p 0.5: bucket expired (t_exp 0 ≤ 0) → t_exp = 0;
        // + 0.5·1500·2048 = 1 536 000 → t_exp 1 536 000, s 1 536 000.
        assert_eq!(at(0, 1500, 0.5, 500 * US).score, 1_536_000);
        // t=1 ms, 1500 B, p 0.25: own bucket not expired (1 536 000 > 1 000 000);
        // + 768 000 → t_exp 2 304 000, s 1 304 000.
        assert_eq!(at(1000 * US, 1500, 0.25, 500 * US).score, 1_304_000);
        // t=2 ms, 64 B, p 0: t_exp 2 304 000 > 2 000 000 kept; s 304 000.
        assert_eq!(at(2000 * US, 64, 0.0, 500 * US).score, 304_000);
        // t=3 ms, 1500 B, p 0: expired (2 304 000 ≤ 3 000 000) → t_exp = now; s 0.
        assert_eq!(at(3000 * US, 1500, 0.0, 500 * US).score, 0);
        // t=3.5 ms, 1000 B, p 1: expired → t_exp 3 500 000; + 2 048 000 → s 2 048 000.
        assert_eq!(at(3500 * US, 1000, 1.0, 500 * US).score, 2_048_000);
        // t=3.6 ms, 1000 B, p 1, qdelay 1.1 ms: t_exp 5 548 000 + 2 048 000 = 7 596 000,
        // s 3 996 000; 1.1e6 · 3 996 000 = 4.3956e12 > 4e12 → sanction.
        let o = at(3600 * US, 1000, 1.0, 1100 * US);
        assert_eq!((o.score, o.verdict), (3_996_000, Verdict::Sanction));
        // t=5.6 ms, 1000 B, p 0.125, qdelay 1.1 ms: t_exp 7 596 000 + 256 000 =
        // 7 852 000, s 2 252 000; 1.1e6 · 2 252 000 = 2.4772e12 ≤ 4e12 → L queue.
        let o = at(5600 * US, 1000, 0.125, 1100 * US);
        assert_eq!((o.score, o.verdict), (2_252_000, Verdict::LowLatency));
        // t=10 ms, 1000 B, p 0.375: expired → t_exp 10 000 000; + 768 000.
        assert_eq!(at(10_000 * US, 1000, 0.375, 500 * US).score, 768_000);
        assert_eq!(q.score(10_500 * US, 5), 268_000);
        assert_eq!(q.score(11_000 * US, 5), 0);
    }

    #[test]
    fn the_score_is_capped_at_five_seconds() {
        // 1500 B at p 1 adds 3 072 000 ns; 1628 packets at t=0 would reach
        // 5 001 216 000 > 5e9: the cap holds it at 5e9, and 1 s later it is 4e9.
        let mut q = qp();
        for _ in 0..2000 {
            q.qprotect(0, 1, 0, 1500, 0, 1.0);
        }
        assert_eq!(q.score(0, 0), MAX_QLSCORE);
        assert_eq!(q.score(NS_PER_S, 0), 4 * NS_PER_S);
    }

    #[test]
    fn the_critical_queue_latency_rule() {
        let q = qp();
        // At qdelay = CRITICALqL exactly, no score is enough (strict >).
        assert!(!q.exceeds(1000 * US, MAX_QLSCORE));
        // 1 ns above it, the product decides: 1 000 001 · 4 000 000 = 4 000 004 000 000
        // > 4e12, but 1 000 001 · 3 999 996 = 3 999 999 999 996 < 4e12.
        assert!(q.exceeds(1000 * US + 1, 4_000_000));
        assert!(!q.exceeds(1000 * US + 1, 3_999_996));
        // At 2·CRITICALqL, half the score threshold is the limit: 2e6·2e6 = 4e12, not >.
        assert!(!q.exceeds(2000 * US, 2_000_000));
        assert!(q.exceeds(2000 * US, 2_000_001));
        // A configured QPLatencyThreshold overrides MAXTH.
        let cfg = QpConfig {
            latency_threshold: Some(3000 * US),
            ..QpConfig::default()
        };
        let q = QueueProtection::new(&cfg, 1000 * US);
        assert_eq!(q.critical_ql(), 3000 * US);
        assert!(!q.exceeds(3000 * US, MAX_QLSCORE));
        // CRITICALqLPRODUCT = 3e6 · 4e6 = 1.2e13: at 4 ms, score 3e6 is the limit.
        assert!(!q.exceeds(4000 * US, 3_000_000));
        assert!(q.exceeds(4000 * US, 3_000_001));
    }

    #[test]
    fn buckets_are_recycled_then_shared_when_all_candidates_are_in_use() {
        // Flows A, B, C, D all hash to candidates (3, 7). Each arrives at t=0 with
        // 1000 B at p 1 (2 048 000 ns).
        let mut q = qp();
        let ab = h(3, 7);
        let o = |q: &mut QueueProtection, t, f| q.qprotect(t, f, ab, 1000, 0, 1.0);
        // A: bucket 3 is expired (t_exp 0 ≤ 0) → A recycles 3.
        assert_eq!((o(&mut q, 0, 0xA).bucket), 3);
        // B: 3 is A's and live; 7 expired → B takes 7.
        assert_eq!(o(&mut q, 0, 0xB).bucket, 7);
        // C: both live → the default bucket 32, expired → reset; score 2 048 000.
        let c = o(&mut q, 0, 0xC);
        assert_eq!((c.bucket, c.score), (NBUCKETS, 2_048_000));
        // D: same; the default bucket is live (C's), so D adds to C's score: shared.
        let d = o(&mut q, 0, 0xD);
        assert_eq!((d.bucket, d.score), (NBUCKETS, 4_096_000));
        // At t=1 ms, B again: 3 is A's, 7 is B's → B keeps 7: 2 048 000 − 1 000 000
        // + 2 048 000 = 3 096 000.
        let b = o(&mut q, 1000 * US, 0xB);
        assert_eq!((b.bucket, b.score), (7, 3_096_000));
        // At t=2.5 ms A's bucket 3 has expired (2 048 000 ≤ 2 500 000), B's has not
        // (4 096 000): C, not an owner of either, recycles 3 with a fresh score.
        let c = o(&mut q, 2500 * US, 0xC);
        assert_eq!((c.bucket, c.score), (3, 2_048_000));
        // A, having lost bucket 3, finds 3 (C's, live) and 7 (B's, live): default.
        // The default bucket (t_exp 4 096 000, last claimed by D) is live at 2.5 ms:
        // 1 596 000 + 2 048 000 = 3 644 000.
        let a = o(&mut q, 2500 * US, 0xA);
        assert_eq!((a.bucket, a.score), (NBUCKETS, 3_644_000));
    }

    #[test]
    fn ownership_is_checked_before_an_expired_candidate_is_recycled() {
        // E owns its second candidate (9); its first (4) is expired. E must keep 9,
        // not recycle 4.
        let mut q = qp();
        // F takes 4 at t=0 with a short score (1000 B at p 1/8: 256 000 ns).
        assert_eq!(q.qprotect(0, 0xF, h(4, 1), 1000, 0, 0.125).bucket, 4);
        // E: 4 is F's and live → E takes 9 (2 048 000 ns).
        assert_eq!(q.qprotect(0, 0xE, h(4, 9), 1000, 0, 1.0).bucket, 9);
        // At 1 ms, 4 has expired; E finds its own 9: 1 048 000 + 2 048 000.
        let e = q.qprotect(1000 * US, 0xE, h(4, 9), 1000, 0, 1.0);
        assert_eq!((e.bucket, e.score), (9, 3_096_000));
    }

    #[test]
    fn a_packet_s_microflow_is_its_flow_and_direction() {
        let mut q = qp();
        let fwd = Packet {
            flow: 7,
            hash: 0xDEAD_BEEF,
            size: 1500,
            ..Packet::default()
        };
        let rev = Packet {
            reverse: true,
            ..fwd.clone()
        };
        let (id_f, h_f) = q.microflow(&fwd);
        let (id_r, h_r) = q.microflow(&rev);
        assert_eq!((id_f, id_r), (14, 15));
        assert_ne!(h_f, h_r);
        // Same packet, same microflow: the second arrival finds the first's bucket
        // (1500 B at p 1/2: 1 536 000 ns each, 100 µs apart: 3 072 000 − 100 000).
        let a = q.on_arrival(0, &fwd, 0, 0.5);
        let b = q.on_arrival(100 * US, &fwd, 0, 0.5);
        assert_eq!((a.bucket, b.score), (b.bucket, 2_972_000));
        // A salt changes the hash, not the id.
        q.set_salt(1);
        assert_eq!(q.microflow(&fwd).0, 14);
        assert_ne!(q.microflow(&fwd).1, h_f);
    }

    #[test]
    fn disabled_protection_keeps_every_packet() {
        let cfg = QpConfig {
            enabled: false,
            ..QpConfig::default()
        };
        let mut q = QueueProtection::new(&cfg, 1000 * US);
        for i in 0..100 {
            let o = q.qprotect(i, 1, 0, 1500, 50_000 * US, 1.0);
            assert_eq!(o.verdict, Verdict::LowLatency);
        }
        assert_eq!(q.score(0, 0), 0);
    }

    #[test]
    fn drain_rate_exponent_sets_the_fill() {
        // LG_AGING 17: 2^(30−17) = 8192 ns per byte at p 1; 1000 B at p 0.5 = 4 096 000.
        let cfg = QpConfig {
            drain_rate_exponent: 17,
            ..QpConfig::default()
        };
        let mut q = QueueProtection::new(&cfg, 1000 * US);
        assert_eq!(q.qprotect(0, 1, 0, 1000, 0, 0.5).score, 4_096_000);
    }

    /// Property, over random traffic of 100 flows (so buckets collide and the default
    /// bucket is shared): (1) a sanction happens only when both conditions of the test
    /// hold for the returned score; (2) no score is invented: the total live score of
    /// all buckets after an arrival is at most the total before (at the same instant)
    /// plus that packet's fill, and exactly that without the cap; (3) a packet at
    /// probability 0 raises no bucket's score; (4) scores stay ≤ MAX_QLSCORE.
    #[test]
    fn property_sanctions_and_score_conservation() {
        let mut g = Rng::stream(11, "qp");
        for case in 0..50 {
            let mut q = qp();
            let mut now = 0;
            for _ in 0..2000 {
                now += g.below(300 * US);
                let flow = g.below(100);
                let h32 = salted_hash(flow as u32, case);
                let bytes = 64 + g.below(1437) as u32;
                let p = if g.below(4) == 0 { 0.0 } else { g.uniform() };
                let qdelay = g.below(3000 * US);
                let total =
                    |q: &QueueProtection| (0..=NBUCKETS).map(|b| q.score(now, b)).sum::<u64>();
                let before = total(&q);
                let before_max = (0..=NBUCKETS).map(|b| q.score(now, b)).max().unwrap();
                let o = q.qprotect(now, flow, h32, bytes, qdelay, p);
                let after = total(&q);
                let fill = q.fill(bytes, p);
                assert!(after <= before + fill, "case {case}: score invented");
                if o.score < MAX_QLSCORE {
                    assert_eq!(after, before + fill, "case {case}: score lost");
                }
                if p == 0.0 {
                    assert_eq!(after, before);
                    assert!(o.score <= before_max);
                }
                assert!(o.score <= MAX_QLSCORE);
                assert_eq!(
                    o.verdict == Verdict::Sanction,
                    qdelay > 1000 * US && qdelay as u128 * o.score as u128 > 4_000_000_000_000,
                    "case {case}"
                );
            }
        }
    }

    fn read(v: serde_json::Value) -> Result<QpConfig> {
        let map = v.as_object().unwrap().clone();
        let mut p = Params::new("links.0.model", &map, &[]);
        let c = QpConfig::from_params(&mut p)?;
        p.finish("test")?;
        Ok(c)
    }

    #[test]
    fn parameters_and_their_errors() {
        assert_eq!(read(json!({})).unwrap(), QpConfig::default());
        let c = read(json!({
            "qp_enable": false,
            "qp_latency_threshold": "2ms",
            "qp_queuing_score_threshold": "8000us",
            "qp_drain_rate_exponent": 17,
        }))
        .unwrap();
        assert_eq!(
            c,
            QpConfig {
                enabled: false,
                latency_threshold: Some(2000 * US),
                score_threshold: 8000 * US,
                drain_rate_exponent: 17,
            }
        );
        let e = read(json!({"qp_drain_rate_exponent": 31}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("links.0.model.qp_drain_rate_exponent") && e.contains("31"),
            "{e}"
        );
        let e = read(json!({"qp_latency_threshold": "70ms"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("links.0.model.qp_latency_threshold") && e.contains("65534us"),
            "{e}"
        );
        let e = read(json!({"qp_queuing_score_threshold": "0s"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("qp_queuing_score_threshold"), "{e}");
        let e = read(json!({"qp_enable": "yes"})).unwrap_err().to_string();
        assert!(
            e.contains("qp_enable") && e.contains("true or false"),
            "{e}"
        );
    }
}
