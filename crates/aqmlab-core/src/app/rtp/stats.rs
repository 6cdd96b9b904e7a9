//! An RTP receiver's per-source statistics, exactly as RFC 3550 defines them.
//!
//! - Sequence-number tracking with 16-bit wrap, probation of a new source
//!   (`MIN_SEQUENTIAL = 2`), dropout and misorder limits (`MAX_DROPOUT = 3000`,
//!   `MAX_MISORDER = 100`): RFC 3550 Appendix A.1 (`init_seq`, `update_seq`).
//! - Cumulative lost packets (signed, clamped to 24 bits), extended highest sequence
//!   number and the 8-bit fixed-point fraction lost since the previous report:
//!   §6.4.1 and Appendix A.3.
//! - Interarrival jitter `J += (|D| − J)/16` in timestamp units, in the integer form of
//!   Appendix A.8 (`jitter += d − ((jitter + 8) >> 4)`, the estimate scaled by 16; the
//!   report carries `jitter >> 4`). It is updated for every arriving data packet in
//!   arrival order (§6.4.1). A.8's code starts from `transit = 0`, so its first
//!   difference would be the whole random timestamp offset; here the first packet
//!   only sets `transit`, as deployed receivers do.

const RTP_SEQ_MOD: u32 = 1 << 16;
const MAX_DROPOUT: u16 = 3000;
const MAX_MISORDER: u16 = 100;
const MIN_SEQUENTIAL: u16 = 2;

/// The fields of one RTCP report block (RFC 3550 §6.4.1) that this model uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportBlock {
    /// Fraction lost since the last report, in 1/256.
    pub fraction_lost: u8,
    /// Cumulative number of packets lost (24-bit signed).
    pub cumulative_lost: i32,
    /// Extended highest sequence number received (cycles · 2^16 + max_seq).
    pub extended_max: u32,
    /// Interarrival jitter in timestamp units.
    pub jitter: u32,
}

/// RFC 3550 A.1 `source` state plus the A.8 jitter variables.
#[derive(Clone, Debug, Default)]
pub struct SourceStats {
    started: bool,
    max_seq: u16,
    /// Shifted count of sequence-number cycles.
    cycles: u32,
    base_seq: u32,
    bad_seq: u32,
    probation: u16,
    received: u32,
    expected_prior: u32,
    received_prior: u32,
    /// Relative transit time of the previous packet, and whether there was one.
    transit: u32,
    have_transit: bool,
    /// Jitter estimate scaled by 16 (A.8 integer form).
    jitter16: u32,
}

impl SourceStats {
    fn init_seq(&mut self, seq: u16) {
        self.base_seq = seq as u32;
        self.max_seq = seq;
        self.bad_seq = RTP_SEQ_MOD + 1; // so seq == bad_seq is false
        self.cycles = 0;
        self.received = 0;
        self.received_prior = 0;
        self.expected_prior = 0;
    }

    /// RFC 3550 A.1 `update_seq`: false while the source is on probation or after a
    /// very large jump (a restarted sender).
    pub fn update_seq(&mut self, seq: u16) -> bool {
        if !self.started {
            self.started = true;
            self.init_seq(seq);
            self.max_seq = seq.wrapping_sub(1);
            self.probation = MIN_SEQUENTIAL;
        }
        let udelta = seq.wrapping_sub(self.max_seq);
        if self.probation > 0 {
            if seq == self.max_seq.wrapping_add(1) {
                self.probation -= 1;
                self.max_seq = seq;
                if self.probation == 0 {
                    self.init_seq(seq);
                    self.received += 1;
                    return true;
                }
            } else {
                self.probation = MIN_SEQUENTIAL - 1;
                self.max_seq = seq;
            }
            return false;
        } else if udelta < MAX_DROPOUT {
            // In order, with permissible gap.
            if seq < self.max_seq {
                self.cycles += RTP_SEQ_MOD;
            }
            self.max_seq = seq;
        } else if udelta as u32 <= RTP_SEQ_MOD - MAX_MISORDER as u32 {
            // The sequence number made a very large jump.
            if seq as u32 == self.bad_seq {
                // Two sequential packets: the other side restarted without telling us.
                self.init_seq(seq);
            } else {
                self.bad_seq = (seq as u32 + 1) & (RTP_SEQ_MOD - 1);
                return false;
            }
        }
        // else: duplicate or reordered packet.
        self.received += 1;
        true
    }

    /// RFC 3550 A.8: a data packet with RTP timestamp `rtp_ts` arrived at `arrival`
    /// (the receiver's clock in the same timestamp units).
    pub fn update_jitter(&mut self, rtp_ts: u32, arrival: u32) {
        let transit = arrival.wrapping_sub(rtp_ts);
        if self.have_transit {
            let d = (transit.wrapping_sub(self.transit) as i32).unsigned_abs();
            self.jitter16 = self
                .jitter16
                .wrapping_add(d)
                .wrapping_sub((self.jitter16 + 8) >> 4);
        }
        self.transit = transit;
        self.have_transit = true;
    }

    /// One data packet: sequence bookkeeping and jitter.
    pub fn on_packet(&mut self, seq: u16, rtp_ts: u32, arrival: u32) {
        self.update_seq(seq);
        self.update_jitter(rtp_ts, arrival);
    }

    pub fn extended_max(&self) -> u32 {
        self.cycles.wrapping_add(self.max_seq as u32)
    }

    /// Packets expected since the base (A.3).
    pub fn expected(&self) -> u32 {
        self.extended_max()
            .wrapping_sub(self.base_seq)
            .wrapping_add(1)
    }

    /// Packets received since the base (duplicates included, as A.1 counts them).
    pub fn received(&self) -> u32 {
        self.received
    }

    /// Cumulative lost, clamped to the 24-bit signed report field (A.3).
    pub fn cumulative_lost(&self) -> i32 {
        let lost = self.expected() as i64 - self.received as i64;
        lost.clamp(-0x800000, 0x7fffff) as i32
    }

    /// The jitter the report carries (timestamp units).
    pub fn jitter(&self) -> u32 {
        self.jitter16 >> 4
    }

    /// The jitter estimate in timestamp units with its 4 fractional bits.
    pub fn jitter_exact(&self) -> f64 {
        self.jitter16 as f64 / 16.0
    }

    /// True once the source passed probation (a report block can be made).
    pub fn valid(&self) -> bool {
        self.started && self.probation == 0
    }

    /// Make a report block (A.3): also moves the "prior" counters, so the next
    /// fraction lost covers the next interval only.
    pub fn report_block(&mut self) -> ReportBlock {
        let expected = self.expected();
        let expected_interval = expected.wrapping_sub(self.expected_prior);
        self.expected_prior = expected;
        let received_interval = self.received.wrapping_sub(self.received_prior);
        self.received_prior = self.received;
        let lost_interval = expected_interval as i64 - received_interval as i64;
        let fraction_lost = if expected_interval == 0 || lost_interval <= 0 {
            0
        } else {
            ((lost_interval << 8) / expected_interval as i64) as u8
        };
        ReportBlock {
            fraction_lost,
            cumulative_lost: self.cumulative_lost(),
            extended_max: self.extended_max(),
            jitter: self.jitter(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A.8 on a hand-made sequence (8 kHz clock, 160-sample packets): RTP timestamps
    /// 0, 160, 320, 480, 640 arriving at 1000, 1170, 1310, 1500, 1640 → transit 1000,
    /// 1010, 990, 1020, 1000 → |D| = 10, 20, 30, 20. Integer A.8 (J scaled by 16):
    /// J = 0 + 10 − ((0 + 8) >> 4 = 0) = 10; J = 10 + 20 − (18 >> 4 = 1) = 29;
    /// J = 29 + 30 − (37 >> 4 = 2) = 57; J = 57 + 20 − (65 >> 4 = 4) = 73.
    /// Reported jitter = 73 >> 4 = 4 (the float form gives 0.625, 1.836, 3.596, 4.621).
    #[test]
    fn jitter_follows_a8_on_a_hand_made_sequence() {
        let mut s = SourceStats::default();
        let arrivals = [1000u32, 1170, 1310, 1500, 1640];
        let mut j16 = Vec::new();
        for (i, &a) in arrivals.iter().enumerate() {
            s.on_packet(i as u16, 160 * i as u32, a);
            j16.push(s.jitter16);
        }
        assert_eq!(j16, vec![0, 10, 29, 57, 73]);
        assert_eq!(s.jitter(), 4);
        assert_eq!(s.jitter_exact(), 73.0 / 16.0);
    }

    /// The transit difference is taken modulo 2^32, so a timestamp wrap is invisible.
    #[test]
    fn jitter_survives_timestamp_wrap() {
        let mut s = SourceStats::default();
        s.update_jitter(u32::MAX - 100, 50); // transit 151
        s.update_jitter((u32::MAX - 100).wrapping_add(160), 50 + 170); // wraps; transit 161, |D| = 10
        assert_eq!(s.jitter16, 10);
    }

    /// A.1 + A.3 by hand: 65533 starts probation (max_seq = 65532, probation 2 → 1);
    /// 65534 ends it, so `init_seq(65534)`: base 65534, received 1. Then 65535
    /// (received 2), 1 (wrap: cycles = 65536; received 3), 2 (4), 5 (5); 0, 3 and 4 are
    /// missing. Extended max = 65536 + 5 = 65541; expected = 65541 − 65534 + 1 = 8;
    /// lost = 8 − 5 = 3; fraction lost = (3 << 8)/8 = 96. A second report after 6 and 7
    /// arrive: expected interval 2, received interval 2 → fraction 0, cumulative 3.
    #[test]
    fn loss_counters_follow_a1_a3() {
        let mut s = SourceStats::default();
        for seq in [65533u16, 65534, 65535, 1, 2, 5] {
            s.update_seq(seq);
        }
        assert!(s.valid());
        assert_eq!(s.received(), 5);
        assert_eq!(s.extended_max(), 65541);
        assert_eq!(s.expected(), 8);
        let rb = s.report_block();
        assert_eq!(rb.cumulative_lost, 3);
        assert_eq!(rb.fraction_lost, 96);
        assert_eq!(rb.extended_max, 65541);
        s.update_seq(6);
        s.update_seq(7);
        let rb = s.report_block();
        assert_eq!(rb.fraction_lost, 0);
        assert_eq!(rb.cumulative_lost, 3);
    }

    /// Duplicates count as received (A.1), so cumulative lost can go negative and the
    /// interval's fraction is then 0, not a wrapped byte.
    #[test]
    fn duplicates_make_loss_negative_not_wrapped() {
        let mut s = SourceStats::default();
        for seq in [10u16, 11, 12, 12, 12, 13] {
            s.update_seq(seq);
        }
        // base 11: expected 11..=13 = 3, received 11, 12, 12, 12, 13 = 5.
        let rb = s.report_block();
        assert_eq!(rb.cumulative_lost, -2);
        assert_eq!(rb.fraction_lost, 0);
    }

    /// A jump beyond MAX_DROPOUT is ignored once, and taken as a restart when the
    /// next packet follows it.
    #[test]
    fn large_jump_needs_two_sequential_packets() {
        let mut s = SourceStats::default();
        for seq in [100u16, 101, 102] {
            s.update_seq(seq);
        }
        assert!(!s.update_seq(20_000));
        assert_eq!(s.extended_max(), 102);
        assert!(s.update_seq(20_001));
        assert_eq!(s.expected(), 1); // re-based at 20001
        assert_eq!(s.received(), 1);
    }
}
