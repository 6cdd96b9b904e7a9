//! `Agent/TCP/Sack1`'s scoreboard, `ScoreBoardRQ` (tcp/scoreboard-rq.cc): the SACKed
//! packet ranges above the cumulative ACK, kept as FullTcp's reassembly queue keeps
//! them (tcp/rq.cc: disjoint `[start, end)` blocks, merged when they touch), and a
//! retransmission pointer `h_seqno_`. `next_retran` (`GetNextRetran`) returns the first
//! packet at or above the pointer that is not SACKed and lies below a SACKed block.
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct ScoreBoard {
    /// SACKed blocks, ascending, disjoint, not touching.
    blocks: VecDeque<(i64, i64)>,
    /// `sack_min`: the cumulative ACK + 1 (the reassembly queue's `rcv_nxt_`).
    sack_min: i64,
    /// `h_seqno_`: the next packet the retransmission scan starts from.
    h_seqno: i64,
    /// `total_`: packets in the blocks.
    total: i64,
    /// `changed_` of the last update.
    pub changed: bool,
}

impl Default for ScoreBoard {
    fn default() -> Self {
        ScoreBoard {
            blocks: VecDeque::new(),
            sack_min: -1,
            h_seqno: -1,
            total: 0,
            changed: false,
        }
    }
}

impl ScoreBoard {
    /// `ClearScoreBoard` (scoreboard-rq.h:36).
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.total = 0;
        self.h_seqno = -1;
    }

    /// `UpdateScoreBoard(last_ack, tcph)` (scoreboard-rq.cc:71).
    pub fn update(&mut self, last_ack: i64, sack: &[(u64, u64)]) {
        let old_total = self.total;
        self.changed = false;
        if self.sack_min <= last_ack {
            self.sack_min = last_ack + 1;
            if !self.blocks.is_empty() {
                self.clear_to_next();
                self.changed = true;
            }
        }
        for &(l, r) in sack {
            self.add(l as i64, r as i64);
        }
        self.changed = self.changed || old_total != self.total;
    }

    /// `ReassemblyQueue::cleartonxt` (rq.h:120, `clearto`, rq.cc): drop what the
    /// cumulative ACK covers.
    fn clear_to_next(&mut self) {
        while let Some(&(s, e)) = self.blocks.front() {
            if e <= self.sack_min {
                self.total -= e - s;
                self.blocks.pop_front();
            } else {
                if s < self.sack_min {
                    self.total -= self.sack_min - s;
                    self.blocks[0].0 = self.sack_min;
                }
                break;
            }
        }
    }

    /// `ReassemblyQueue::add` (rq.cc): insert `[start, end)`, merging overlapping or
    /// touching blocks; a block reaching `rcv_nxt_` (`sack_min`) advances it.
    fn add(&mut self, start: i64, end: i64) {
        if end <= start {
            return;
        }
        let (mut s, mut e) = (start, end);
        // First block that ends at or after `start` (may touch or overlap).
        let i = self.blocks.partition_point(|&(_, be)| be < s);
        while i < self.blocks.len() && self.blocks[i].0 <= e {
            let (bs, be) = self.blocks.remove(i).expect("in range");
            self.total -= be - bs;
            s = s.min(bs);
            e = e.max(be);
        }
        self.blocks.insert(i, (s, e));
        self.total += e - s;
        if self.sack_min >= s {
            self.sack_min = e;
        }
    }

    /// `GetNextRetran` (scoreboard-rq.cc:48) with `ReassemblyQueue::nexthole`.
    pub fn next_retran(&mut self) -> Option<i64> {
        if self.h_seqno < self.sack_min {
            self.h_seqno = self.sack_min;
        }
        let seq = self.h_seqno;
        for (k, &(s, e)) in self.blocks.iter().enumerate() {
            if s > seq {
                return Some(seq); // below this block: a hole
            }
            if s <= seq && e >= seq {
                // Covered: the hole is at the block's end, if a block lies above it.
                if k + 1 < self.blocks.len() {
                    self.h_seqno = e;
                    return Some(e);
                }
                return None;
            }
        }
        None
    }

    /// `MarkRetran` (scoreboard-rq.h:40).
    pub fn mark_retran(&mut self, seq: i64) {
        if seq >= self.h_seqno {
            self.h_seqno = seq + 1;
        }
    }
}
