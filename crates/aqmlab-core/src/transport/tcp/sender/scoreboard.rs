//! The SACK scoreboard (RFC 6675): one entry per segment sent and not yet cumulatively
//! acknowledged, in sequence order, the SACK blocks applied to it, loss marking by
//! `IsLost`, and the segments NextSeg() picks (rules 1, 3 and 4). See `sender/mod.rs`
//! for how `pipe` is kept.

use super::TcpSender;
use crate::measure::flow_stats::FlowStats;
use crate::sim::time::Nanos;
use crate::transport::tcp::Segment;

/// One segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug)]
pub(super) struct SegInfo {
    pub(super) start: u64,
    /// Time of the last (re)transmission (RACK).
    pub(super) xmit_ts: Nanos,
    /// Payload bytes (≤ MSS ≤ 65 495): a u32 keeps the entry at 24 B.
    pub(super) size: u32,
    pub(super) sacked: bool,
    pub(super) lost: bool,
    pub(super) retrans: bool,
}

impl SegInfo {
    #[inline]
    pub(super) fn len(&self) -> u64 {
        self.size as u64
    }
    #[inline]
    pub(super) fn end(&self) -> u64 {
        self.start + self.size as u64
    }
}

impl TcpSender {
    /// The number of scoreboard entries starting below `seq` (`partition_point(start <
    /// seq)`). Entries are contiguous and, but for the last of a transfer, one MSS
    /// long, so the index is computed and checked, with the binary search as fallback.
    #[inline]
    pub(super) fn index_start(&self, seq: u64) -> usize {
        let Some(front) = self.sb.front() else {
            return 0;
        };
        if seq <= front.start {
            return 0;
        }
        let g = ((seq - front.start).div_ceil(self.w.mss) as usize).min(self.sb.len());
        let below = |k: usize| self.sb[k].start < seq;
        if (g == self.sb.len() || !below(g)) && below(g - 1) {
            return g;
        }
        self.sb.partition_point(|e| e.start < seq)
    }

    /// The number of scoreboard entries ending at or below `seq` (`partition_point(end
    /// <= seq)`), computed like `index_start`.
    #[inline]
    pub(super) fn index_end(&self, seq: u64) -> usize {
        let Some(front) = self.sb.front() else {
            return 0;
        };
        let g = ((seq.saturating_sub(front.start) / self.w.mss) as usize).min(self.sb.len());
        let done = |k: usize| self.sb[k].end() <= seq;
        if (g == self.sb.len() || !done(g)) && (g == 0 || done(g - 1)) {
            return g;
        }
        self.sb.partition_point(|e| e.end() <= seq)
    }

    /// Delivery-rate record of a retransmission of entry `i` (`tcp_rate_skb_sent`).
    #[inline]
    pub(super) fn rate_sent(&mut self, i: usize, now: Nanos) {
        if self.rate_on {
            self.tx_rate[i] = self.rate.on_sent(now, false);
        }
    }

    /// Record a new segment in the scoreboard (and its delivery-rate record).
    #[inline]
    pub(super) fn push_segment(&mut self, now: Nanos, start: u64, len: u64) {
        if self.rate_on {
            let idle = self.sb.is_empty();
            let tx = self.rate.on_sent(now, idle);
            self.tx_rate.push_back(tx);
        }
        self.sb.push_back(SegInfo {
            start,
            size: len as u32,
            sacked: false,
            lost: false,
            retrans: false,
            xmit_ts: now,
        });
    }

    /// RFC 6675 NextSeg rule 3: the first unSACKed segment above HighRxt and below the
    /// highest SACKed octet (not lost: rule 1 would have taken it).
    pub(super) fn rule3(&self) -> Option<usize> {
        let from = self.index_start(self.high_rxt);
        (from..self.sb.len())
            .take_while(|&i| self.sb[i].end() <= self.high_sacked)
            .find(|&i| !self.sb[i].sacked && !self.sb[i].retrans)
    }

    /// Send scoreboard entry `i` by rule 3: a retransmission of a segment not known to
    /// be lost. HighRxt moves to its end, and it counts twice in pipe (both copies may
    /// be in the network; RFC 6675 SetPipe (a) + (b)).
    pub(super) fn retransmit_rule3(
        &mut self,
        now: Nanos,
        i: usize,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let e = &mut self.sb[i];
        debug_assert!(!e.lost && !e.retrans && !e.sacked);
        e.retrans = true;
        e.xmit_ts = now;
        let (start, end) = (e.start, e.end());
        self.rtx_order.push_back((start, now));
        self.rate_sent(i, now);
        self.retrans_bytes += end - start;
        self.high_rxt = self.high_rxt.max(end);
        st.retransmits += 1;
        self.emit(now, start, end, true, out);
    }

    /// RFC 6675 NextSeg rule 4, the rescue retransmission: once per recovery, after the
    /// cumulative ACK has passed the first retransmission, resend the highest unSACKed
    /// segment. HighRxt is not updated and pipe is not changed (SetPipe does not count
    /// the copy of a segment above HighRxt), so the next ACK sees the same pipe.
    pub(super) fn rescue(
        &mut self,
        now: Nanos,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) -> bool {
        if self.snd_una <= self.rescue_rxt {
            return false;
        }
        let Some(i) = self.sb.iter().rposition(|e| !e.sacked) else {
            return false;
        };
        self.rate_sent(i, now);
        let e = &mut self.sb[i];
        e.xmit_ts = now;
        let (start, end, retrans) = (e.start, e.end(), e.retrans);
        if retrans {
            self.rtx_order.push_back((start, now));
        }
        self.rescue_rxt = self.recover.unwrap_or(self.snd_nxt);
        st.retransmits += 1;
        self.emit(now, start, end, true, out);
        true
    }

    /// The first lost, unretransmitted, unSACKed segment. The check for none (every
    /// send attempt of a flow without loss) is inlined into the caller; the search is not.
    #[inline(always)]
    pub(super) fn next_lost(&mut self) -> Option<usize> {
        if self.lost_bytes == 0 || self.lost_from == u64::MAX {
            return None;
        }
        self.find_lost()
    }

    /// `next_lost` past its check: the scoreboard walk from `lost_from`.
    #[inline(never)]
    fn find_lost(&mut self) -> Option<usize> {
        let from = self.index_end(self.lost_from);
        for i in from..self.sb.len() {
            let e = &self.sb[i];
            if e.lost && !e.retrans && !e.sacked {
                return Some(i);
            }
        }
        self.lost_from = u64::MAX;
        None
    }

    /// Mark SACKed segments; true if anything new was SACKed. Segments inside a block
    /// of the previous SACK are already SACKed and are jumped over (Linux keeps the same
    /// `recv_sack_cache`), so an ACK costs the newly SACKed segments, not the blocks' size.
    pub(super) fn apply_sack(&mut self, now: Nanos, seg: &Segment) -> bool {
        let mut changed = false;
        let n = seg.tcp.sack_len as usize;
        for &(s, e) in &seg.tcp.sack[..n] {
            if e <= self.snd_una {
                continue;
            }
            let mut i = self.index_start(s);
            while i < self.sb.len() && self.sb[i].end() <= e {
                let (xs, xe) = (self.sb[i].start, self.sb[i].end());
                if let Some(ce) = self.cached_sack_end(xs, xe) {
                    i = self.index_start(ce);
                    continue;
                }
                let x = &mut self.sb[i];
                if !x.sacked {
                    x.sacked = true;
                    let l = x.len();
                    if x.lost {
                        self.lost_bytes -= l;
                    }
                    if x.retrans {
                        self.retrans_bytes -= l;
                    }
                    self.sacked_bytes += l;
                    self.high_sacked = self.high_sacked.max(x.end());
                    changed = true;
                    let (t, e, r) = (x.xmit_ts, x.end(), x.retrans);
                    if self.ca_rtt && !r {
                        self.ca_sack_ts = self.ca_sack_ts.max(Some(t));
                    }
                    if self.cfg.rack {
                        self.rack.on_delivered(now, t, e, r, self.rtt.min_rtt);
                    }
                    if self.rate_on {
                        self.rate.on_delivered(&mut self.tx_rate[i], t, e, l);
                    }
                }
                i += 1;
            }
        }
        self.sack_cache = seg.tcp.sack;
        self.sack_cache_len = n as u8;
        changed
    }

    /// The end of the previous ACK's SACK block that contains [start, end), if any.
    #[inline]
    pub(super) fn cached_sack_end(&self, start: u64, end: u64) -> Option<u64> {
        self.sack_cache[..self.sack_cache_len as usize]
            .iter()
            .find(|&&(cs, ce)| cs <= start && end <= ce)
            .map(|&(_, ce)| ce)
    }

    /// RFC 6675 IsLost: an unSACKed segment is lost when at least DupThresh segments
    /// (or more than (DupThresh − 1)·SMSS bytes) above it are SACKed. Returns whether the
    /// first segment is lost.
    pub(super) fn mark_lost_by_sack(&mut self) -> bool {
        let thresh = self.cfg.dupthresh as u64;
        let (mut segs, mut bytes) = (0u64, 0u64);
        let mss = self.w.mss;
        // Segments above the highest SACKed one have nothing SACKed above them.
        let top = self.index_end(self.high_sacked);
        for i in (0..top).rev() {
            let x = &mut self.sb[i];
            if x.sacked {
                segs += 1;
                bytes += x.len();
            } else if segs >= thresh || bytes > (thresh - 1) * mss {
                if x.lost {
                    break; // everything below was marked by an earlier pass
                }
                x.lost = true;
                let (s, l) = (x.start, x.len());
                if !x.retrans {
                    self.lost_from = self.lost_from.min(s);
                }
                self.lost_bytes += l;
                self.lost_total += l;
            }
        }
        self.sb.front().is_some_and(|x| x.lost)
    }
}
