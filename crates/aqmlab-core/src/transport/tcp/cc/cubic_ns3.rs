//! CUBIC as ns-3.44's `TcpCubic` runs it (`src/internet/model/tcp-cubic.cc`, tag
//! ns-3.44), for the `ns3` profile (`ns3_cubic = true`). It is the BIC-era Linux
//! algorithm ns-3 ported, in whole segments and with integer steps, not RFC 9438 as
//! `cubic.rs` models it. Line numbers below are of that file.
//!
//! - Congestion event (`GetSsThresh`, l. 450–476): `segCwnd = cwnd / MSS` (integer);
//!   fast convergence `lastMax = ⌊segCwnd·(1 + β)/2⌋` if `segCwnd < lastMax`, else
//!   `lastMax = segCwnd`; the epoch ends; `ssthresh = max(⌊segCwnd·β⌋, 2)·MSS`, β = 0.7.
//! - Slow start (`IncreaseWindow`, l. 183–239): cwnd grows by the whole segments
//!   acknowledged (not capped at ssthresh); HyStart's round restarts when the ACK
//!   passes `endSeq`. The segments of an ACK are its newly delivered bytes / MSS
//!   (`currentDelivered`: a cumulative ACK over SACKed data counts only the unSACKed
//!   part), the remainders carried to later ACKs (`TcpSocketBase::ProcessAck`,
//!   `m_bytesAckedNotProcessed`).
//! - Congestion avoidance (same function): `m_cWndCnt += segments`; `cnt = Update()`; if
//!   `m_cWndCnt ≥ cnt`, cwnd grows by one MSS and `m_cWndCnt −= cnt` (at most one MSS
//!   per ACK).
//! - `Update` (l. 242–349): at the first call of an epoch `epochStart = now`, `ackCnt =
//!   segments`, `tcpCwnd = segCwnd`, and `K = ∛((lastMax − segCwnd)/C)` s with origin
//!   `lastMax` (K = 0, origin `segCwnd` if `lastMax ≤ segCwnd`), C = 0.4. `t = now +
//!   delayMin − epochStart`; `target = origin ± ⌊C·|t − K|³⌋`; `cnt = ⌊segCwnd/(target −
//!   segCwnd)⌋` if target > segCwnd, else `100·segCwnd`; `cnt ≤ 20` while `lastMax = 0`
//!   (`CntClamp`). TCP-friendliness: `scale = ⌊8·(1024 + 1024β)/3/(1024 − 1024β)⌋` = 15,
//!   `delta = segCwnd·scale >> 3`; every `delta` acknowledged segments (`ackCnt`) add one
//!   to `tcpCwnd`; if `tcpCwnd > segCwnd`, `cnt ≤ ⌊segCwnd/(tcpCwnd − segCwnd)⌋`.
//!   Returns `max(cnt, 2)`.
//! - `PktsAcked` (l. 352–374), on every ACK of new data in or out of recovery, with the
//!   connection's *smoothed* RTT (`TcpSocketBase::ProcessAck` passes `m_tcb->m_srtt`):
//!   ignored within `CubicDelta` = 10 ms of the epoch start; `delayMin = min(delayMin,
//!   srtt)`; HyStart runs while `segCwnd ≥ 16` and cwnd ≤ ssthresh — also in recovery
//!   and right after it, where cwnd ≤ ssthresh too.
//! - HyStart (`HystartUpdate`, l. 377–429; `HystartDelayThresh`, l. 432–447): until
//!   found (reset only by an RTO), an ACK within 2 ms of the last train ACK extends the
//!   train and ends slow start once it is more than `delayMin` (not Linux's
//!   `delayMin/2`) past the round start; the round's first 8 samples give `currRtt`
//!   (their minimum), later ones end slow start when `currRtt > delayMin +
//!   clamp(delayMin, 4 ms, 1000 ms)` (not Linux's `delayMin/8`). Found: `ssthresh = cwnd`.
//! - RTO (`CongestionStateSet(CA_LOSS)` → `CubicReset`, `HystartReset`, l. 479–501):
//!   origin, K, `ackCnt`, `tcpCwnd`, `delayMin` and `found` are cleared and a HyStart
//!   round starts; `lastMax` is kept.
//!
//! Not modelled: ns-3 grows only while `m_isCwndLimited` (cwnd < bytes in flight + MSS
//! at the last send; a bulk sender always is), and also calls `PktsAcked` with one
//! segment on duplicate ACKs (no effect on `delayMin` unless SRTT changed).

use super::{AckSample, Window};
use super::{CongestionEvent, Controller, RtoEvent};
use crate::sim::time::{Nanos, NS_PER_MS};

const C: f64 = 0.4;
const BETA: f64 = 0.7;
/// `CntClamp`.
const CNT_CLAMP: u32 = 20;
/// `CubicDelta`: delay samples this soon after an epoch start are ignored.
const CUBIC_DELTA: Nanos = 10 * NS_PER_MS;
/// `HyStartLowWindow` (segments), `HyStartAckDelta`, `HyStartMinSamples`,
/// `HyStartDelayMin`, `HyStartDelayMax`.
const HYSTART_LOW_WINDOW: u64 = 16;
const HYSTART_ACK_DELTA: Nanos = 2 * NS_PER_MS;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: Nanos = 4 * NS_PER_MS;
const HYSTART_DELAY_MAX: Nanos = 1000 * NS_PER_MS;

/// `TcpCubic`'s state (`m_*` members; `None` where ns-3 holds `Time::Min()`).
#[derive(Clone, Debug, Default)]
pub struct CubicNs3 {
    hystart: bool,
    cwnd_cnt: u32,
    /// Segments.
    pub last_max_cwnd: u32,
    origin: u32,
    /// Seconds.
    k: f64,
    delay_min: Option<Nanos>,
    epoch_start: Option<Nanos>,
    found: bool,
    round_start: Nanos,
    end_seq: u64,
    last_ack: Nanos,
    curr_rtt: Option<Nanos>,
    sample_cnt: u32,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// `TcpSocketBase::m_bytesAckedNotProcessed`.
    bytes_carry: u64,
}

impl CubicNs3 {
    pub fn new(hystart: bool) -> CubicNs3 {
        CubicNs3 {
            hystart,
            ..CubicNs3::default()
        }
    }

    /// `HystartReset`.
    fn hystart_reset(&mut self, now: Nanos, high_tx: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = high_tx;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `HystartUpdate`.
    fn hystart_update(&mut self, w: &mut Window, now: Nanos, delay: Nanos) {
        if self.found {
            return;
        }
        let delay_min = self.delay_min.unwrap_or(0);
        if now - self.last_ack <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            if now - self.round_start > delay_min {
                self.found = true;
            }
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt.is_none_or(|c| c > delay) {
                self.curr_rtt = Some(delay);
            }
            self.sample_cnt += 1;
        } else if self
            .curr_rtt
            .is_some_and(|c| c > delay_min + delay_min.clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX))
        {
            self.found = true;
        }
        if self.found {
            w.ssthresh = w.cwnd;
        }
    }

    /// `Update`: how many acknowledged segments one MSS of growth takes.
    fn update(&mut self, now: Nanos, seg_cwnd: u32, segs: u32) -> u32 {
        self.ack_cnt += segs;
        let epoch = match self.epoch_start {
            Some(t) => t,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = segs;
                self.tcp_cwnd = seg_cwnd;
                if self.last_max_cwnd <= seg_cwnd {
                    self.k = 0.0;
                    self.origin = seg_cwnd;
                } else {
                    self.k = ((self.last_max_cwnd - seg_cwnd) as f64 / C).powf(1.0 / 3.0);
                    self.origin = self.last_max_cwnd;
                }
                now
            }
        };
        let t = (now + self.delay_min.unwrap_or(0) - epoch) as f64 * 1e-9;
        let offs = (t - self.k).abs();
        let delta = (C * offs * offs * offs) as u32;
        let target = if t < self.k {
            self.origin.wrapping_sub(delta)
        } else {
            self.origin.wrapping_add(delta)
        };
        let mut cnt = if target > seg_cwnd {
            seg_cwnd / (target - seg_cwnd)
        } else {
            100 * seg_cwnd
        };
        if self.last_max_cwnd == 0 && cnt > CNT_CLAMP {
            cnt = CNT_CLAMP;
        }
        // TCP-friendliness.
        let scale = (8.0 * (1024.0 + BETA * 1024.0) / 3.0 / (1024.0 - BETA * 1024.0)) as u32;
        let delta = ((seg_cwnd * scale) >> 3).max(1);
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > seg_cwnd {
            cnt = cnt.min(seg_cwnd / (self.tcp_cwnd - seg_cwnd));
        }
        cnt.max(2)
    }

    /// `GetSsThresh`.
    pub fn ssthresh(&mut self, w: &Window) -> u64 {
        let seg_cwnd = (w.cwnd / w.mss) as u32;
        self.last_max_cwnd = if seg_cwnd < self.last_max_cwnd {
            (seg_cwnd as f64 * (1.0 + BETA) / 2.0) as u32
        } else {
            seg_cwnd
        };
        self.epoch_start = None;
        ((seg_cwnd as f64 * BETA) as u64).max(2) * w.mss
    }

    /// An RTO: `CubicReset` and `HystartReset`.
    pub fn on_rto(&mut self, now: Nanos, snd_nxt: u64) {
        self.origin = 0;
        self.k = 0.0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.delay_min = None;
        self.found = false;
        self.hystart_reset(now, snd_nxt);
    }
}

/// Built by `cc = "cubic"` with `ns3_cubic` (`cubic::KIND`).
impl Controller for CubicNs3 {
    /// `PktsAcked` with the smoothed RTT, on every ACK of new data.
    #[inline]
    fn pkts_acked(&mut self, w: &mut Window, a: &AckSample) {
        if a.srtt == 0 || self.epoch_start.is_some_and(|t| a.now - t < CUBIC_DELTA) {
            return;
        }
        let rtt = a.srtt;
        if self.delay_min.is_none_or(|d| d > rtt) {
            self.delay_min = Some(rtt);
        }
        if self.hystart && w.cwnd <= w.ssthresh && w.cwnd >= HYSTART_LOW_WINDOW * w.mss {
            self.hystart_update(w, a.now, rtt);
        }
    }

    /// `IncreaseWindow` on an ACK outside recovery.
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        self.bytes_carry += a.delivered % w.mss;
        let mut segs = (a.delivered / w.mss) as u32;
        if self.bytes_carry >= w.mss {
            segs += 1;
            self.bytes_carry -= w.mss;
        }
        if w.cwnd < w.ssthresh {
            if self.hystart && a.snd_una > self.end_seq {
                self.hystart_reset(a.now, a.snd_nxt);
            }
            w.cwnd += segs as u64 * w.mss;
            segs = 0;
        }
        if w.cwnd >= w.ssthresh && segs > 0 {
            self.cwnd_cnt += segs;
            let cnt = self.update(a.now, (w.cwnd / w.mss) as u32, segs);
            if self.cwnd_cnt >= cnt {
                w.cwnd += w.mss;
                self.cwnd_cnt -= cnt;
            }
        }
    }

    fn on_congestion(&mut self, w: &Window, _: &CongestionEvent) -> u64 {
        self.ssthresh(w)
    }

    fn on_rto(&mut self, _: &Window, e: &RtoEvent) {
        CubicNs3::on_rto(self, e.now, e.snd_nxt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: Nanos, acked: u64, srtt: Nanos) -> AckSample {
        AckSample {
            now,
            acked,
            delivered: acked,
            srtt,
            ..Default::default()
        }
    }

    /// `GetSsThresh` in whole segments: cwnd 14 500 B at MSS 1000 is 14 segments,
    /// ssthresh ⌊14·0.7⌋ = 9 segments (the fractional model: 0.7·14.5 = 10.15); a
    /// second event below lastMax = 14: lastMax = ⌊10·1.7/2⌋ = 8.
    #[test]
    fn ssthresh_and_fast_convergence_in_whole_segments() {
        let mut c = CubicNs3::new(false);
        let w = Window {
            cwnd: 14_500,
            ssthresh: u64::MAX,
            mss: 1000,
        };
        assert_eq!(c.ssthresh(&w), 9000);
        assert_eq!(c.last_max_cwnd, 14);
        let w = Window { cwnd: 10_999, ..w };
        assert_eq!(c.ssthresh(&w), 7000);
        assert_eq!(c.last_max_cwnd, 8);
        let w = Window { cwnd: 2_500, ..w };
        assert_eq!(c.ssthresh(&w), 2000); // ⌊2·0.7⌋ = 1 → at least 2 segments
    }

    /// Congestion avoidance by hand. lastMax = 100, cwnd = ssthresh = 70 segments,
    /// delayMin = 100 ms (set by `pkts_acked` before the epoch). Epoch start at 10 s:
    /// K = ∛(30/0.4) = 4.217 s, t = 0.1 s, target = 100 − ⌊0.4·4.117³⌋ = 100 − 27 = 73,
    /// cnt = ⌊70/3⌋ = 23. TCP-friendliness: delta = 70·15 >> 3 = 131 segments per
    /// tcpCwnd step, far away. So 23 segments (ACKs of one each) give one MSS: the
    /// 23rd ACK grows cwnd to 71 and leaves m_cWndCnt 0. Slow start below ssthresh adds
    /// whole acknowledged segments, the 500 B remainders carried: 1500 + 1500 = 3 MSS.
    #[test]
    fn congestion_avoidance_counts_acks_to_the_integer_cnt() {
        let mss = 1000;
        let mut c = CubicNs3::new(false);
        let mut w = Window {
            cwnd: 100 * mss,
            ssthresh: u64::MAX,
            mss,
        };
        w.ssthresh = c.ssthresh(&w);
        w.cwnd = w.ssthresh;
        assert_eq!(w.cwnd, 70 * mss);
        let s = 10_000 * NS_PER_MS;
        c.pkts_acked(&mut w, &ack(s - 1, mss, 100 * NS_PER_MS));
        for i in 0..22 {
            c.on_ack(&mut w, &ack(s + i, mss, 100 * NS_PER_MS));
            assert_eq!(w.cwnd, 70 * mss, "ACK {i}");
        }
        assert_eq!((c.origin, c.k > 4.21 && c.k < 4.22), (100, true));
        c.on_ack(&mut w, &ack(s + 22, mss, 100 * NS_PER_MS));
        assert_eq!(w.cwnd, 71 * mss);
        assert_eq!(c.cwnd_cnt, 0);

        let mut w = Window {
            cwnd: 10 * mss,
            ssthresh: 20 * mss,
            mss,
        };
        let mut c = CubicNs3::new(false);
        c.on_ack(&mut w, &ack(0, 1500, 0));
        assert_eq!(w.cwnd, 11 * mss);
        c.on_ack(&mut w, &ack(1, 1500, 0));
        assert_eq!(w.cwnd, 13 * mss);
    }

    /// HyStart's delay test as ns-3 has it: threshold = delayMin clamped to [4 ms, 1 s],
    /// i.e. the 9th sample of a round ends slow start when the round's minimum smoothed
    /// RTT exceeds 2·delayMin. delayMin = 50 ms; samples of 90 ms do not end it, of
    /// 101 ms do (Linux's delayMin/8 rule would stop at 56.25 ms).
    #[test]
    fn hystart_delay_threshold_is_delay_min() {
        for (srtt, found) in [(90, false), (101, true)] {
            let mss = 1000;
            let mut c = CubicNs3::new(true);
            let mut w = Window {
                cwnd: 20 * mss,
                ssthresh: u64::MAX,
                mss,
            };
            c.pkts_acked(&mut w, &ack(0, mss, 50 * NS_PER_MS));
            c.hystart_reset(0, 0);
            c.last_ack = 0;
            // Samples 10 ms apart: no ACK train.
            for i in 1..=9 {
                c.pkts_acked(&mut w, &ack(i * 10 * NS_PER_MS, mss, srtt * NS_PER_MS));
            }
            assert_eq!(c.found, found, "srtt {srtt} ms");
            assert_eq!(w.ssthresh == w.cwnd, found);
        }
    }
}
