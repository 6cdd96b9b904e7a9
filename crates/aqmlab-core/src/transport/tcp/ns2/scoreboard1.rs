//! `ScoreBoard1`, the scoreboard of ns-2.35's `Agent/TCP/Linux` (tcp/scoreboard1.cc,
//! tcp/scoreboard1.h): a list of blocks of packets, each in flight, SACKed, lost
//! (FACK: more than `dupack_threshold` + 1 = 4 packets below the highest SACKed one,
//! scoreboard1.cc:168) or retransmitted (one packet per block, remembering `snd_nxt`
//! at the retransmission and a retransmission id to detect a lost retransmission,
//! scoreboard1.cc:213). The node list is a `Vec` (blocks in sequence order); the C
//! pointer `nxt_to_retrx_` becomes the sequence number it pointed into.

/// `SKB_FLAG_*` (scoreboard1.h:58).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flag {
    InFlight,
    Sacked,
    Lost,
    Retransmitted,
}

/// `FLAG_DATA_SACKED`, `FLAG_DATA_LOST`, `FLAG_UNSURE_TSTAMP` (ns-linux-util.h:360).
pub const FLAG_DATA_SACKED: u8 = 2;
pub const FLAG_DATA_LOST: u8 = 8;
pub const FLAG_UNSURE_TSTAMP: u8 = 16;

/// `numdupacks_` as `UpdateScoreBoard`'s default `dupack_threshold` (scoreboard1.h:157).
const DUPACK_THRESHOLD: i64 = 3;

/// `ScoreBoardNode1`: `[seq, nxt]`, or for a retransmitted packet `seq` and the
/// `snd_nxt` when it was retransmitted (`nxt`), with its id `retran`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    flag: Flag,
    seq: i64,
    nxt: i64,
    retran: i64,
}

impl Node {
    fn new(seq: i64, nxt: i64, flag: Flag) -> Node {
        Node {
            flag,
            seq,
            nxt,
            retran: 0,
        }
    }
    fn end(&self) -> i64 {
        if self.flag == Flag::Retransmitted {
            self.seq
        } else {
            self.nxt
        }
    }
    fn len(&self) -> i64 {
        if self.flag == Flag::Retransmitted {
            1
        } else {
            self.nxt + 1 - self.seq
        }
    }
    /// `SetFlag` (scoreboard1.h:78).
    fn set_flag(&mut self, flag: Flag) {
        if self.flag == Flag::Retransmitted {
            self.nxt = self.seq;
        }
        self.flag = flag;
    }
    /// `ShouldClean` (scoreboard1.h:83): 0 keep, -1 all acked, n the first n acked.
    fn should_clean(&self, ack: i64) -> i64 {
        if ack < self.seq {
            0
        } else if self.flag == Flag::Retransmitted || ack >= self.nxt {
            -1
        } else {
            ack + 1 - self.seq
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ScoreBoard1 {
    nodes: Vec<Node>,
    /// The packet `nxt_to_retrx_` points into (None: NULL).
    nxt_to_retrx: Option<i64>,
    acked_rtx_id: i64,
    rtx_id: i64,
    /// The highest SACKed packet.
    pub fack: i64,
    /// Packets marked lost, and SACKed.
    pub fack_out: i64,
    pub sack_out: i64,
}

impl ScoreBoard1 {
    pub fn new() -> ScoreBoard1 {
        let mut sb = ScoreBoard1::default();
        sb.clear();
        sb
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// `packets_in_flight` (scoreboard1.h:162).
    pub fn packets_in_flight(&self, snd_una: i64, snd_nxt: i64) -> i64 {
        snd_nxt - snd_una - self.fack_out - self.sack_out
    }

    /// `ClearScoreBoard` (scoreboard1.cc:303).
    pub fn clear(&mut self) {
        self.rtx_id = 0;
        self.acked_rtx_id = -1;
        self.fack_out = 0;
        self.sack_out = 0;
        self.fack = 0;
        self.nxt_to_retrx = None;
        self.nodes.clear();
    }

    /// The index of the node `nxt_to_retrx_` points to: the first not wholly below it.
    fn nxt_index(&self) -> Option<usize> {
        let s = self.nxt_to_retrx?;
        self.nodes.iter().position(|n| n.end() >= s)
    }

    fn split(&mut self, i: usize, seq: i64) {
        let n = self.nodes[i];
        self.nodes.insert(i + 1, Node::new(seq, n.nxt, n.flag));
        self.nodes[i].nxt = seq - 1;
    }

    fn mergable(&self, i: usize) -> bool {
        self.nodes
            .get(i + 1)
            .is_some_and(|nx| nx.flag != Flag::Retransmitted && nx.flag == self.nodes[i].flag)
    }

    fn merge(&mut self, i: usize) {
        self.nodes[i].nxt = self.nodes[i + 1].nxt;
        self.nodes.remove(i + 1);
    }

    /// `CleanRtxQueue` (scoreboard1.cc:62): drop what `last_ack` covers; true when a
    /// retransmission with a newer id was acknowledged.
    fn clean_rtx_queue(&mut self, last_ack: i64, flag: &mut u8) -> bool {
        let mut changed = false;
        while let Some(&head) = self.nodes.first() {
            let cmp = head.should_clean(last_ack);
            if cmp == 0 {
                break;
            }
            let pkts = if cmp < 0 { head.len() } else { cmp };
            match head.flag {
                Flag::Sacked => self.sack_out -= pkts,
                Flag::Lost => self.fack_out -= pkts,
                _ => {}
            }
            if cmp < 0 {
                self.nodes.remove(0);
                if head.flag == Flag::Retransmitted {
                    if head.retran > self.acked_rtx_id {
                        changed = true;
                        self.acked_rtx_id = head.retran;
                    }
                    *flag |= FLAG_UNSURE_TSTAMP;
                }
            } else {
                self.nodes[0].seq = last_ack + 1;
                break;
            }
        }
        changed
    }

    /// `UpdateScoreBoard` (scoreboard1.cc:101): returns `FLAG_DATA_SACKED`,
    /// `FLAG_DATA_LOST`, `FLAG_UNSURE_TSTAMP`. `sack` holds the ACK's blocks as
    /// `[left, right)` packet numbers (ns-2's `sa_left`, `sa_right`).
    pub fn update(&mut self, last_ack: i64, sack: &[(i64, i64)]) -> u8 {
        let mut flag = 0u8;
        let mut thorough = self.clean_rtx_queue(last_ack, &mut flag);
        if self.nodes.is_empty() {
            self.clear();
            thorough = false;
        }
        if !thorough && sack.is_empty() {
            return flag;
        }
        // Drop D-SACKs, sort by left edge (insertion sort as scoreboard1.cc:132).
        let mut blocks: [(i64, i64); 4] = [(0, 0); 4];
        let mut sa_length = 0usize;
        for &(l, r) in sack.iter().take(4) {
            if l >= last_ack {
                let mut j = sa_length;
                sa_length += 1;
                while j > 0 && blocks[j - 1].0 > l {
                    blocks[j] = blocks[j - 1];
                    j -= 1;
                }
                blocks[j] = (l, r);
            }
        }
        if !thorough && sa_length == 0 {
            return flag;
        }
        if sa_length > 0 && self.fack < blocks[sa_length - 1].1 - 1 {
            self.fack = blocks[sa_length - 1].1 - 1;
            thorough = true;
        }
        if self.nodes.is_empty() {
            self.nodes
                .push(Node::new(last_ack + 1, self.fack, Flag::InFlight));
        }
        self.nxt_to_retrx = None;
        let lost_seq_threshold = self.fack - (DUPACK_THRESHOLD + 1);
        let mut now = Some(0usize);
        let mut prev: Option<usize> = None;
        let mut si = 0usize;
        while let Some(i) = now {
            if !(si < sa_length || thorough) {
                break;
            }
            if self.nodes[i].flag != Flag::Sacked {
                while si < sa_length && blocks[si].1 <= self.nodes[i].seq {
                    si += 1;
                }
                if si < sa_length && blocks[si].0 <= self.nodes[i].end() {
                    let (l, r) = blocks[si];
                    if l > self.nodes[i].seq {
                        // The first part is not SACKed (splittable: not retransmitted,
                        // since a retransmitted node is one packet).
                        self.split(i, l);
                    } else {
                        if r <= self.nodes[i].end() {
                            self.split(i, r);
                        }
                        let pktnum = self.nodes[i].len();
                        match self.nodes[i].flag {
                            Flag::Lost => self.fack_out -= pktnum,
                            Flag::Retransmitted => {
                                self.acked_rtx_id = self.nodes[i].retran;
                                flag |= FLAG_UNSURE_TSTAMP;
                                thorough = true;
                            }
                            _ => {}
                        }
                        self.sack_out += pktnum;
                        flag |= FLAG_DATA_SACKED;
                        self.nodes[i].set_flag(Flag::Sacked);
                    }
                }
                if si >= sa_length || blocks[si].0 > self.nodes[i].end() {
                    let n = self.nodes[i];
                    match n.flag {
                        Flag::Retransmitted => {
                            if n.nxt <= self.fack
                                || n.retran + DUPACK_THRESHOLD + 1 < self.acked_rtx_id
                            {
                                self.nodes[i].set_flag(Flag::Lost);
                                self.fack_out += 1;
                                flag |= FLAG_DATA_LOST;
                                self.nxt_to_retrx.get_or_insert(n.seq);
                            }
                        }
                        Flag::InFlight => {
                            if n.seq <= lost_seq_threshold {
                                if lost_seq_threshold < n.end() {
                                    self.split(i, lost_seq_threshold + 1);
                                }
                                self.nodes[i].set_flag(Flag::Lost);
                                self.fack_out += self.nodes[i].len();
                                flag |= FLAG_DATA_LOST;
                                self.nxt_to_retrx.get_or_insert(n.seq);
                            }
                        }
                        Flag::Lost => {
                            self.nxt_to_retrx.get_or_insert(n.seq);
                        }
                        Flag::Sacked => {}
                    }
                }
            }
            let p = match prev {
                Some(p) if self.mergable(p) => {
                    self.merge(p);
                    p
                }
                _ => i,
            };
            prev = Some(p);
            if p + 1 == self.nodes.len() && self.nodes[p].end() < self.fack {
                let start = self.nodes[p].end() + 1;
                self.nodes.push(Node::new(start, self.fack, Flag::InFlight));
            }
            now = (p + 1 < self.nodes.len()).then_some(p + 1);
        }
        flag
    }

    /// `MarkLoss` (scoreboard1.cc:265), on a timeout: every packet not SACKed is lost.
    pub fn mark_loss(&mut self, snd_una: i64, snd_nxt: i64) {
        self.nxt_to_retrx = None;
        let mut i = 0usize;
        let mut last_lost = false;
        while i < self.nodes.len() {
            if self.nodes[i].flag != Flag::Sacked {
                if self.nodes[i].flag != Flag::Lost {
                    self.fack_out += self.nodes[i].end() - self.nodes[i].seq + 1;
                }
                self.nodes[i].set_flag(Flag::Lost);
                if last_lost {
                    self.merge(i - 1);
                    i -= 1;
                } else {
                    self.nxt_to_retrx.get_or_insert(self.nodes[i].seq);
                }
                last_lost = true;
            } else {
                last_lost = false;
            }
            if i + 1 == self.nodes.len() && self.nodes[i].end() + 1 < snd_nxt {
                let start = self.nodes[i].end() + 1;
                self.nodes
                    .push(Node::new(start, snd_nxt - 1, Flag::InFlight));
            }
            i += 1;
        }
        if self.nodes.is_empty() && snd_una < snd_nxt {
            self.nodes.push(Node::new(snd_una, snd_nxt - 1, Flag::Lost));
            self.nxt_to_retrx = Some(snd_una);
            self.fack_out += snd_nxt - snd_una;
        }
        self.rtx_id = 0;
        self.acked_rtx_id = -1;
    }

    /// `GetNextRetran` (scoreboard1.cc:322): the first lost packet from `nxt_to_retrx_`.
    pub fn next_retran(&mut self) -> Option<i64> {
        let i = self.nxt_index()?;
        let j = (i..self.nodes.len()).find(|&j| self.nodes[j].flag == Flag::Lost);
        self.nxt_to_retrx = j.map(|j| self.nodes[j].seq);
        j.map(|j| self.nodes[j].seq)
    }

    /// `MarkRetran` (scoreboard1.cc:332): the first packet of the lost block at
    /// `nxt_to_retrx_` becomes a retransmitted node.
    pub fn mark_retran(&mut self, snd_nxt: i64) {
        let Some(i) = self.nxt_index() else { return };
        self.fack_out -= 1;
        if self.nodes[i].nxt > self.nodes[i].seq {
            let s = self.nodes[i].seq + 1;
            self.split(i, s);
        }
        let n = &mut self.nodes[i];
        n.flag = Flag::Retransmitted;
        n.nxt = snd_nxt;
        n.retran = self.rtx_id;
        self.rtx_id += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(sb: &ScoreBoard1) -> Vec<(Flag, i64, i64)> {
        sb.nodes.iter().map(|n| (n.flag, n.seq, n.end())).collect()
    }

    #[test]
    fn sack_blocks_mark_fack_losses_and_retransmissions() {
        // scoreboard1.cc's own test() trace: ACK 1, SACK [4,5): 2..3 in flight, 4 SACKed.
        let mut sb = ScoreBoard1::new();
        let f = sb.update(1, &[(4, 5)]);
        assert_eq!(f, FLAG_DATA_SACKED);
        assert_eq!(
            flags(&sb),
            vec![(Flag::InFlight, 2, 3), (Flag::Sacked, 4, 4)]
        );
        assert_eq!((sb.fack, sb.sack_out, sb.fack_out), (4, 1, 0));
        // SACK [7,8): fack 7, threshold 7 - 4 = 3: packets 2..3 lost, 5..6 in flight.
        let f = sb.update(1, &[(7, 8)]);
        assert_eq!(f, FLAG_DATA_SACKED | FLAG_DATA_LOST);
        assert_eq!(
            flags(&sb),
            vec![
                (Flag::Lost, 2, 3),
                (Flag::Sacked, 4, 4),
                (Flag::InFlight, 5, 6),
                (Flag::Sacked, 7, 7)
            ]
        );
        assert_eq!((sb.fack_out, sb.sack_out), (2, 2));
        assert_eq!(sb.packets_in_flight(2, 8), 2);
        // Retransmit 2 (snd_nxt 8).
        assert_eq!(sb.next_retran(), Some(2));
        sb.mark_retran(8);
        assert_eq!(sb.fack_out, 1);
        assert_eq!(sb.next_retran(), Some(3));
        // The cumulative ACK 7 clears everything below 8... an ACK of 3 removes 2..3.
        sb.update(3, &[(7, 8)]);
        assert_eq!(flags(&sb)[0], (Flag::Sacked, 4, 4));
        assert_eq!((sb.fack_out, sb.sack_out), (0, 2));
    }

    #[test]
    fn timeout_marks_everything_lost_and_retransmits_in_order() {
        let mut sb = ScoreBoard1::new();
        sb.mark_loss(5, 10); // 5..9 outstanding
        assert_eq!(flags(&sb), vec![(Flag::Lost, 5, 9)]);
        assert_eq!(sb.fack_out, 5);
        assert_eq!(sb.packets_in_flight(5, 10), 0);
        assert_eq!(sb.next_retran(), Some(5));
        sb.mark_retran(10);
        assert_eq!(sb.next_retran(), Some(6));
        sb.mark_retran(10);
        assert_eq!(sb.packets_in_flight(5, 10), 2);
        // The ACK of 5 (no SACK) cleans it: 6 retransmitted, 7..9 lost.
        let f = sb.update(5, &[]);
        assert_eq!(f, FLAG_UNSURE_TSTAMP);
        assert_eq!(
            flags(&sb),
            vec![(Flag::Retransmitted, 6, 6), (Flag::Lost, 7, 9)]
        );
        assert_eq!(sb.next_retran(), Some(7));
        // A second timeout: the retransmitted 6 is lost again and merges.
        sb.mark_loss(6, 10);
        assert_eq!(flags(&sb), vec![(Flag::Lost, 6, 9)]);
        assert_eq!(sb.fack_out, 4);
        sb.update(9, &[]);
        assert!(sb.is_empty());
        assert_eq!(sb.fack_out, 0);
    }
}
