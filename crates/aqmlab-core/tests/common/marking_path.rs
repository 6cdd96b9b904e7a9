//! A hand-built path for one sans-IO TCP connection, with no engine in between: the
//! sender's segments cross a bottleneck of `rate` whose FIFO sets CE on every ECN-capable
//! packet that arrives to find at least `k` packets queued (DCTCP's step marking,
//! RFC 8257 §3.1) and drops arrivals beyond `limit`; `one_way` later they reach the
//! receiver, whose ACKs return over an uncongested path of the same delay. The tests
//! that use it watch the endpoints' state between events.

use aqmlab_core::measure::flow_stats::FlowStats;
use aqmlab_core::sim::time::{tx_time, Nanos};
use aqmlab_core::transport::tcp::receiver::TcpReceiver;
use aqmlab_core::transport::tcp::sender::TcpSender;
use aqmlab_core::transport::tcp::{Segment, TcpConfig};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    QueueArrival(usize),
    TxDone,
    AtReceiver(usize),
    AtSender(usize),
    SenderTimer,
    ReceiverTimer,
}

pub struct MarkingPath {
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    pub sst: FlowStats,
    pub rst: FlowStats,
    /// Time of the last event handled.
    pub now: Nanos,
    pub marks: u64,
    pub drops: u64,
    pub max_queue: usize,
    /// Queue length integrated over time up to `now` (packets × ns).
    pub queue_area: f64,
    rate: u64,
    one_way: Nanos,
    k: usize,
    limit: usize,
    /// Every segment sent, indexed by the events that carry it.
    wire: Vec<Segment>,
    heap: BinaryHeap<Reverse<(Nanos, u64, Ev)>>,
    seq: u64,
    queue: VecDeque<usize>,
    busy: Option<usize>,
    out: Vec<Segment>,
    s_timer: Option<Nanos>,
    r_timer: Option<Nanos>,
    /// Whether `out` holds what the receiver sent (else the sender).
    from_receiver: bool,
}

impl MarkingPath {
    /// A connection that has `bytes` to send (`u64::MAX`: unlimited) and has sent its SYN.
    pub fn new(
        cfg: TcpConfig,
        bytes: u64,
        rate: u64,
        one_way: Nanos,
        k: usize,
        limit: usize,
    ) -> Self {
        let mut snd = TcpSender::new(cfg);
        let rcv = TcpReceiver::new(cfg, snd.caps.accurate_ecn());
        let (mut sst, rst) = (FlowStats::default(), FlowStats::default());
        let mut out = Vec::new();
        snd.write(0, bytes, false, &mut out, &mut sst);
        snd.open(0, &mut out);
        MarkingPath {
            snd,
            rcv,
            sst,
            rst,
            now: 0,
            marks: 0,
            drops: 0,
            max_queue: 0,
            queue_area: 0.0,
            rate,
            one_way,
            k,
            limit,
            wire: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            queue: VecDeque::new(),
            busy: None,
            out,
            s_timer: None,
            r_timer: None,
            from_receiver: false,
        }
    }

    fn push(&mut self, t: Nanos, e: Ev) {
        self.heap.push(Reverse((t, self.seq, e)));
        self.seq += 1;
    }

    /// Send what the endpoints just emitted — the sender's segments into the queue, the
    /// receiver's ACKs onto the return path if `keep_ack(ack)` — then handle the next
    /// event if it is due by `until`. `on_data` sees each segment the sender emits.
    /// False when nothing is left to do by `until`.
    pub fn step(
        &mut self,
        until: Nanos,
        on_data: &mut impl FnMut(&Segment),
        keep_ack: &mut impl FnMut(&Segment) -> bool,
    ) -> bool {
        let (now, out) = (self.now, std::mem::take(&mut self.out));
        for s in &out {
            let id = self.wire.len();
            self.wire.push(*s);
            if !self.from_receiver {
                on_data(s);
                self.push(now, Ev::QueueArrival(id));
            } else if keep_ack(s) {
                self.push(now + self.one_way, Ev::AtSender(id));
            }
        }
        self.out = out;
        self.out.clear();
        self.arm_timers();
        let Some(&Reverse((t, _, ev))) = self.heap.peek() else {
            return false;
        };
        if t > until {
            return false;
        }
        self.heap.pop();
        self.queue_area += self.queue.len() as f64 * (t - self.now) as f64;
        self.now = t;
        self.from_receiver = matches!(ev, Ev::AtReceiver(_) | Ev::ReceiverTimer);
        self.handle(ev);
        true
    }

    /// Queue an event for each endpoint timer whose deadline moved.
    fn arm_timers(&mut self) {
        let now = self.now;
        if let Some(d) = self.snd.next_deadline() {
            if self.s_timer != Some(d) {
                self.s_timer = Some(d);
                self.push(d.max(now), Ev::SenderTimer);
            }
        }
        if let Some(d) = self.rcv.next_deadline() {
            if self.r_timer != Some(d) {
                self.r_timer = Some(d);
                self.push(d.max(now), Ev::ReceiverTimer);
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::QueueArrival(_) if self.queue.len() >= self.limit => self.drops += 1,
            Ev::QueueArrival(id) => {
                if self.queue.len() >= self.k && self.wire[id].ecn.is_capable() {
                    self.wire[id].ecn = aqmlab_core::net::packet::Ecn::Ce;
                    self.marks += 1;
                }
                self.queue.push_back(id);
                self.max_queue = self.max_queue.max(self.queue.len());
                if self.busy.is_none() {
                    self.start_tx();
                }
            }
            Ev::TxDone => {
                let id = self.busy.take().expect("a transmission was in progress");
                self.push(now + self.one_way, Ev::AtReceiver(id));
                self.start_tx();
            }
            Ev::AtReceiver(id) => {
                self.rcv
                    .on_segment(now, &self.wire[id], &mut self.out, &mut self.rst)
            }
            Ev::AtSender(id) => {
                self.snd
                    .on_segment(now, &self.wire[id], &mut self.out, &mut self.sst)
            }
            Ev::SenderTimer if self.s_timer == Some(now) => {
                self.s_timer = None;
                self.snd.on_timer(now, &mut self.out, &mut self.sst);
            }
            Ev::ReceiverTimer if self.r_timer == Some(now) => {
                self.r_timer = None;
                self.rcv.on_timer(now, &mut self.out);
            }
            Ev::SenderTimer | Ev::ReceiverTimer => {}
        }
    }

    /// Put the head of the queue on the wire, if there is one.
    fn start_tx(&mut self) {
        if let Some(h) = self.queue.pop_front() {
            self.busy = Some(h);
            let done = self.now + tx_time(self.wire[h].wire_size(), self.rate);
            self.push(done, Ev::TxDone);
        }
    }
}
