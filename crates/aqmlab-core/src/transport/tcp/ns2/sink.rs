//! ns-2.35's one-way receivers (tcp/tcp-sink.cc): `Agent/TCPSink` acknowledges every
//! packet (`TcpSink::recv`, tcp-sink.cc:358); `Agent/TCPSink/DelAck` (`DelAckSink::recv`,
//! tcp-sink.cc:409) holds the ACK of an in-order packet that neither fills a hole
//! (`RFC2581_immediate_ack_`) nor is the SYN (`SYN_immediate_ack_`) for `interval_`
//! (100 ms) and acknowledges at once when the timer is already running (so every
//! second packet) or the packet is out of order. An ACK carries the highest in-order
//! packet (`Acker::Seqno`, `next_ - 1`); on the wire it is `packetSize_` 40 B.
use super::Ns2SinkKind;
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags, Ecn, TcpHeader};
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
            delivered: 0,
            notify_at: None,
        }
    }

    pub fn next_deadline(&self) -> Option<Nanos> {
        self.delack_at
    }

    /// `Acker::update` (tcp-sink.cc:100): record `seq`, deliver what is now in order.
    fn update(&mut self, seq: i64, payload: u32, st: &mut FlowStats) {
        if seq > self.maxseen {
            self.maxseen = seq;
        }
        if seq < self.next {
            return; // a duplicate
        }
        let i = (seq - self.next) as usize;
        if i >= self.seen.len() {
            self.seen.resize(i + 1, false);
        }
        self.seen[i] = true;
        while self.seen.front() == Some(&true) {
            self.seen.pop_front();
            self.next += 1;
            self.delivered += payload as u64;
            st.bytes_delivered += payload as u64;
        }
    }

    /// `TcpSink::ack` (tcp-sink.cc:266).
    fn ack(&self, now: Nanos, ts_echo: Nanos, out: &mut Vec<Segment>) {
        let tcp = TcpHeader {
            // The cumulative ACK `next_ - 1`, sent + 1 (see `Ns2Sender::on_segment`).
            ack: self.next as u64,
            flags: tcp_flags::ACK,
            ts_val: now,
            ts_ecr: ts_echo,
            hdr_bytes: self.ack_size as u16,
            ..TcpHeader::default()
        };
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
                    self.delack_at = Some(now + self.interval);
                    return;
                }
            }
            self.delack_at = None;
        }
        self.ack(now, seg.tcp.ts_val, out);
    }

    /// `DelAckSink::timeout` (tcp-sink.cc:466): send the held ACK.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            self.ack(now, self.saved_ts, out);
        }
    }
}
