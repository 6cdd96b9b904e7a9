//! ns-2.35's one-way receivers (tcp/tcp-sink.cc): `Agent/TCPSink` acknowledges every
//! packet (`TcpSink::recv`, tcp-sink.cc:358); `Agent/TCPSink/DelAck` (`DelAckSink::recv`,
//! tcp-sink.cc:409) holds the ACK of an in-order packet that neither fills a hole
//! (`RFC2581_immediate_ack_`) nor is the SYN (`SYN_immediate_ack_`) for `interval_`
//! (100 ms) and acknowledges at once when the timer is already running (so every
//! second packet) or the packet is out of order. An ACK carries the highest in-order
//! packet (`Acker::Seqno`, `next_ - 1`); on the wire it is `packetSize_` 40 B.
//! `Agent/TCPSink/Sack1[/DelAck]` (`Sacker::append_ack`, tcp-sink.cc:605) add up to
//! `maxSackBlocks_` (3) SACK blocks, 8 B each: first the block around the packet just
//! received, then the most recent earlier blocks from a stack (`SackStack`) that the
//! new block does not cover.
use super::Ns2SinkKind;
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags, Ecn, TcpHeader, MAX_SACK_BLOCKS};
use crate::sim::time::Nanos;
use crate::transport::tcp::Segment;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct Ns2Sink {
    pub kind: Ns2SinkKind,
    /// DelAck `interval_`.
    interval: Nanos,
    /// ACK size on the wire.
    ack_size: u32,
    /// `next_`: the next packet expected in order.
    pub next: i64,
    /// `maxseen_`: the highest packet seen.
    pub maxseen: i64,
    /// Packets at and above `next`: seen or not (front = `next`).
    seen: VecDeque<bool>,
    /// The DelAck timer and the send time echoed by its ACK.
    pub delack_at: Option<Nanos>,
    saved_ts: Nanos,
    saved_seq: i64,
    /// `is_dup_` of the last packet.
    is_dup: bool,
    /// `SackStack` (tcp-sink.cc:483): earlier blocks, most recent first, and its count.
    stack: [(i64, i64); MAX_SACK_BLOCKS],
    stack_cnt: i64,
    /// In-order payload bytes delivered to the application.
    pub delivered: u64,
    /// Tell the application when `delivered` reaches this (engine).
    pub notify_at: Option<u64>,
}

impl Ns2Sink {
    pub fn new(kind: Ns2SinkKind, interval: Nanos, ack_size: u32) -> Ns2Sink {
        Ns2Sink {
            kind,
            interval,
            ack_size,
            next: 0,
            maxseen: 0,
            seen: VecDeque::new(),
            delack_at: None,
            saved_ts: 0,
            saved_seq: 0,
            is_dup: false,
            stack: [(-1, -1); MAX_SACK_BLOCKS],
            stack_cnt: 0,
            delivered: 0,
            notify_at: None,
        }
    }

    pub fn next_deadline(&self) -> Option<Nanos> {
        self.delack_at
    }

    /// `Acker::update` (tcp-sink.cc:100): record `seq`, deliver what is now in order.
    fn update(&mut self, seq: i64, payload: u32, st: &mut FlowStats) {
        let fresh = seq > self.maxseen;
        if fresh {
            self.maxseen = seq;
        }
        self.is_dup = seq < self.next;
        if seq < self.next {
            return;
        }
        let i = (seq - self.next) as usize;
        if i >= self.seen.len() {
            self.seen.resize(i + 1, false);
        }
        self.is_dup = self.seen[i] && !fresh;
        self.seen[i] = true;
        while self.seen.front() == Some(&true) {
            self.seen.pop_front();
            if self.next as u64 >= st.count_from {
                st.bytes_delivered += payload as u64;
            }
            self.next += 1;
            self.delivered += payload as u64;
        }
    }

    /// Packet `i` (at or above `next`) has arrived.
    fn seen(&self, i: i64) -> bool {
        i < self.next || self.seen.get((i - self.next) as usize) == Some(&true)
    }

    /// `SackStack::push` then set the head (tcp-sink.cc:505).
    fn stack_push(&mut self, block: (i64, i64)) {
        let size = MAX_SACK_BLOCKS as i64;
        if self.stack_cnt >= size {
            self.stack_cnt = size - 1;
        }
        let mut i = self.stack_cnt - 1;
        while i >= 0 {
            self.stack[i as usize + 1] = self.stack[i as usize];
            i -= 1;
        }
        self.stack_cnt += 1;
        self.stack[0] = block;
    }

    /// `SackStack::pop(n)` (tcp-sink.cc:513).
    fn stack_pop(&mut self, n: usize) {
        let mut i = n as i64;
        while i < self.stack_cnt - 1 {
            self.stack[i as usize] = self.stack[i as usize + 1];
            i += 1;
        }
        self.stack[i as usize] = (-1, -1);
        self.stack_cnt -= 1;
    }

    /// `Sacker::append_ack` (tcp-sink.cc:605) without DSACK: the SACK blocks of the ACK
    /// for packet `old_seqno`.
    fn sack_blocks(&mut self, old_seqno: i64, tcp: &mut TcpHeader) {
        let seqno = self.next - 1;
        let mut n = 0;
        if seqno >= self.maxseen && self.stack_cnt != 0 {
            // SackStack::reset
            for e in self.stack.iter_mut().take(self.stack_cnt.max(0) as usize) {
                *e = (-1, -1);
            }
            self.stack_cnt = 0;
        } else if seqno < self.maxseen || self.is_dup {
            let mut right = -1;
            for i in old_seqno..=self.maxseen {
                if !self.seen(i) {
                    right = i;
                    break;
                }
            }
            if right == -1 {
                right = self.maxseen + 1;
            }
            let mut left = -1;
            if old_seqno <= seqno {
                left = 0; // below the cumulative ACK: not sent
            } else {
                let mut i = right - 1;
                while i > seqno {
                    if !self.seen(i) {
                        left = i + 1;
                        break;
                    }
                    i -= 1;
                }
                tcp.sack[n] = (left as u64, right as u64);
                n += 1;
            }
            let recent = (left, right);
            let mut k = 0;
            while n < MAX_SACK_BLOCKS {
                let (l, r) = self.stack[k];
                if l < 0 || r < 0 || r > self.maxseen + 1 {
                    break;
                }
                if recent.0 <= l && recent.1 >= r {
                    self.stack_pop(k);
                    continue;
                }
                tcp.sack[n] = (l as u64, r as u64);
                n += 1;
                k += 1;
            }
            if old_seqno > seqno {
                self.stack_push(recent);
            }
        }
        tcp.sack_len = n as u8;
        tcp.hdr_bytes += 8 * n as u16;
    }

    /// `TcpSink::ack` (tcp-sink.cc:266) for packet `old_seqno`.
    fn ack(&mut self, now: Nanos, old_seqno: i64, ts_echo: Nanos, out: &mut Vec<Segment>) {
        let mut tcp = TcpHeader {
            // The cumulative ACK `next_ - 1`, sent + 1 (see `Ns2Sender::on_segment`).
            ack: self.next as u64,
            flags: tcp_flags::ACK,
            ts_val: now,
            ts_ecr: ts_echo,
            hdr_bytes: self.ack_size as u16,
            ..TcpHeader::default()
        };
        if self.kind.sack() {
            self.sack_blocks(old_seqno, &mut tcp);
        }
        out.push(Segment {
            tcp,
            ecn: Ecn::NotEct,
        });
    }

    pub fn on_segment(
        &mut self,
        now: Nanos,
        seg: &Segment,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let seq = seg.tcp.seq as i64;
        self.update(seq, seg.tcp.payload, st);
        if self.kind.delayed() {
            if self.delack_at.is_none() && seq == self.next - 1 {
                let fills_hole = seq < self.maxseen;
                let syn = seq == 0;
                if !fills_hole && !syn {
                    self.saved_ts = seg.tcp.ts_val;
                    self.saved_seq = seq;
                    self.delack_at = Some(now + self.interval);
                    return;
                }
            }
            self.delack_at = None;
        }
        self.ack(now, seq, seg.tcp.ts_val, out);
    }

    /// `DelAckSink::timeout` (tcp-sink.cc:466): send the held ACK.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            self.ack(now, self.saved_seq, self.saved_ts, out);
        }
    }
}
